/**
 * DescribeGroups (key 15): classic groups' state, protocol and members.
 *
 * Kafka: KafkaApis.handleDescribeGroupsRequest, GroupCoordinator.describeGroups.
 * - An unknown group is Dead, with no error before v6 and GROUP_ID_NOT_FOUND from v6.
 * - A group known only by its committed offsets is an Empty classic group, as in Kafka.
 * - A KIP-848 consumer group with members, or a share group, is GROUP_ID_NOT_FOUND;
 *   from v6 the message names the API that describes it (ConsumerGroupDescribe,
 *   ShareGroupDescribe).
 * - authorizedOperations is never computed (Kafka's "not requested" value).
 * Rule: DESCRIBE on each group; a denied one is answered GROUP_AUTHORIZATION_FAILED.
 */
import { DescribeGroupsRequest } from '../../generated/DescribeGroupsRequest.js';
import { DescribeGroupsResponse, type DescribedGroup } from '../../generated/DescribeGroupsResponse.js';
import { AclOperation as Op, ResourceType as Res } from '../auth/acl.js';
import { splitEntries } from '../auth/rule-kit.js';
import { ErrorCode } from '../errors.js';
import { defineApi } from './define.js';

/** authorizedOperations when the request did not ask for them. */
const NO_OPERATIONS = -2147483648;
/** The first version with GROUP_ID_NOT_FOUND and error messages. */
const FIRST_NOT_FOUND_VERSION = 6;

/** A group answered with `errorCode` and nothing else. */
const bare = (groupId: string, errorCode: number): DescribedGroup => ({
  groupId,
  errorCode,
  errorMessage: null,
  groupState: '',
  protocolType: '',
  protocolData: '',
  members: [],
  authorizedOperations: NO_OPERATIONS,
});

export default defineApi({
  request: DescribeGroupsRequest,
  response: DescribeGroupsResponse,
  authorize: (request, check, _ctx, next) =>
    splitEntries(request, next, {
      entries: request.groups,
      allowed: (groupId) => check.allow(Res.GROUP, groupId, Op.DESCRIBE),
      keep: (groups) => ({ ...request, groups }),
      empty: () => DescribeGroupsResponse.create(),
      answerDenied: (response, denied) => void response.groups.push(...denied.map((groupId) => bare(groupId, ErrorCode.GROUP_AUTHORIZATION_FAILED))),
    }),
  handler:
    ({ offsets: store, classicGroups: groups, consumerGroups, share }) =>
    async (request, ctx) => {
      const named = ctx.apiVersion >= FIRST_NOT_FOUND_VERSION;
      const shareGroups = share()?.listGroups?.() ?? [];
      const described = request.groups.map((groupId): DescribedGroup => {
        const error = store.coordinatorError(groupId);
        if (error !== ErrorCode.NONE) return bare(groupId, error);
        const g = groups.get(groupId);
        if (consumerGroups.get(groupId)?.members.size) {
          return {
            ...bare(groupId, ErrorCode.GROUP_ID_NOT_FOUND),
            errorMessage: named ? `${groupId} is a consumer group (KIP-848): describe it with ConsumerGroupDescribe` : null,
          };
        }
        if (g === undefined) {
          if (shareGroups.some((s) => s.groupId === groupId)) {
            return {
              ...bare(groupId, ErrorCode.GROUP_ID_NOT_FOUND),
              errorMessage: named ? `${groupId} is a share group: describe it with ShareGroupDescribe` : null,
            };
          }
          if (store.hasOffsets(groupId)) return { ...bare(groupId, ErrorCode.NONE), groupState: 'Empty' };
          return named
            ? { ...bare(groupId, ErrorCode.GROUP_ID_NOT_FOUND), groupState: 'Dead', errorMessage: `Group ${groupId} not found.` }
            : { ...bare(groupId, ErrorCode.NONE), groupState: 'Dead' };
        }
        return {
          ...bare(groupId, ErrorCode.NONE),
          groupState: g.state,
          protocolType: g.protocolType ?? '',
          protocolData: g.state === 'Stable' || g.state === 'CompletingRebalance' ? (g.protocol ?? '') : '',
          members: g.describeMembers().map((m) => ({
            memberId: m.memberId,
            groupInstanceId: m.groupInstanceId,
            clientId: m.clientId,
            clientHost: m.clientHost,
            memberMetadata: m.metadata,
            memberAssignment: m.assignment,
          })),
        };
      });
      return DescribeGroupsResponse.create({ groups: described });
    },
});
