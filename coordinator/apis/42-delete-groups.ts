/**
 * DeleteGroups (key 42): removes Empty groups, their offsets and metadata
 * (tombstoned in `__consumer_offsets`).
 *
 * Kafka: KafkaApis.handleDeleteGroupsRequest, GroupCoordinator.deleteGroups.
 * - A group with members is NON_EMPTY_GROUP, an unknown one GROUP_ID_NOT_FOUND.
 * - An Empty KIP-848 consumer group goes even when it has no offsets (and so no
 *   classic side), as Kafka deletes it.
 * - Deviation: kipgen does not delete share groups (their share-partition state
 *   stays): an Empty one is INVALID_REQUEST with a message; a live one is
 *   NON_EMPTY_GROUP, as in Kafka.
 * Rule: DELETE on each group; a denied one is answered GROUP_AUTHORIZATION_FAILED.
 */
import { DeleteGroupsRequest } from '../../generated/DeleteGroupsRequest.js';
import { DeleteGroupsResponse, type DeletableGroupResult } from '../../generated/DeleteGroupsResponse.js';
import { AclOperation as Op, ResourceType as Res } from '../auth/acl.js';
import { splitEntries } from '../auth/rule-kit.js';
import { ErrorCode, errorCodeOf } from '../errors.js';
import { defineApi } from './define.js';

export default defineApi({
  request: DeleteGroupsRequest,
  response: DeleteGroupsResponse,
  authorize: (request, check, _ctx, next) =>
    splitEntries(request, next, {
      entries: request.groupsNames,
      allowed: (groupId) => check.allow(Res.GROUP, groupId, Op.DELETE),
      keep: (groupsNames) => ({ ...request, groupsNames }),
      empty: () => DeleteGroupsResponse.create(),
      answerDenied: (response, denied) =>
        void response.results.push(...denied.map((groupId) => ({ groupId, errorCode: ErrorCode.GROUP_AUTHORIZATION_FAILED, errorMessage: null }))),
    }),
  handler:
    ({ offsets: store, classicGroups: groups, consumerGroups, share }) =>
    async (request) => {
      const shareGroups = share()?.listGroups?.() ?? [];
      const results: DeletableGroupResult[] = [];
      for (const groupId of request.groupsNames) {
        let errorCode = store.coordinatorError(groupId);
        let errorMessage: string | null = null;
        if (errorCode === ErrorCode.NONE) {
          const shareGroup = shareGroups.find((s) => s.groupId === groupId);
          if (shareGroup !== undefined && groups.get(groupId) === undefined && !store.hasOffsets(groupId)) {
            errorCode = shareGroup.state === 'Empty' ? ErrorCode.INVALID_REQUEST : ErrorCode.NON_EMPTY_GROUP;
            errorMessage =
              shareGroup.state === 'Empty' ? `${groupId} is a share group; kipgen does not delete share groups` : `share group ${groupId} has members`;
          } else if (consumerGroups.get(groupId)?.members.size) {
            errorCode = ErrorCode.NON_EMPTY_GROUP;
          } else {
            const wasConsumerGroup = consumerGroups.delete(groupId) === ErrorCode.NONE;
            try {
              errorCode = await groups.delete(groupId);
              if (wasConsumerGroup && errorCode === ErrorCode.GROUP_ID_NOT_FOUND) errorCode = ErrorCode.NONE;
            } catch (caught) {
              errorCode = errorCodeOf(caught);
              errorMessage = (caught as Error).message;
            }
          }
        }
        results.push({ groupId, errorCode, errorMessage });
      }
      return DeleteGroupsResponse.create({ results });
    },
});
