/**
 * ListGroups (key 16): the groups this node coordinates — KIP-848 consumer groups,
 * classic groups (also those known only by their committed offsets, Empty classic
 * groups as in Kafka) and share groups — with their state and type.
 *
 * Kafka: KafkaApis.handleListGroupsRequest, GroupCoordinator.listGroups.
 * - v4+ filters by state, v5+ by type, both compared case-insensitively as Kafka does.
 * - An Empty consumer group that has a classic side (offsets) is listed once, as classic.
 * Rule: only the groups the caller may DESCRIBE are listed.
 */
import { ListGroupsRequest } from '../../generated/ListGroupsRequest.js';
import { ListGroupsResponse, type ListedGroup } from '../../generated/ListGroupsResponse.js';
import { AclOperation as Op, ResourceType as Res } from '../auth/acl.js';
import { ErrorCode } from '../errors.js';
import { defineApi } from './define.js';

const FIRST_STATES_FILTER_VERSION = 4;
const FIRST_TYPES_FILTER_VERSION = 5;

export default defineApi({
  request: ListGroupsRequest,
  response: ListGroupsResponse,
  authorize: async (request, check, _ctx, next) => {
    const response = await next(request);
    response.groups = response.groups.filter((g) => check.allow(Res.GROUP, g.groupId, Op.DESCRIBE));
    return response;
  },
  handler:
    ({ offsets: store, classicGroups: groups, consumerGroups, share }) =>
    async (request, ctx) => {
      const states = ctx.apiVersion >= FIRST_STATES_FILTER_VERSION ? request.statesFilter : [];
      const types = ctx.apiVersion >= FIRST_TYPES_FILTER_VERSION ? request.typesFilter : [];
      const listed: ListedGroup[] = [];
      const seen = new Set<string>();
      for (const g of consumerGroups.all()) {
        if (!store.isCoordinatorFor(g.groupId) || (g.members.size === 0 && groups.get(g.groupId) !== undefined)) continue;
        seen.add(g.groupId);
        listed.push({ groupId: g.groupId, protocolType: 'consumer', groupState: g.state, groupType: 'consumer' });
      }
      for (const g of groups.all()) {
        if (!store.isCoordinatorFor(g.groupId) || seen.has(g.groupId)) continue;
        seen.add(g.groupId);
        listed.push({ groupId: g.groupId, protocolType: g.protocolType ?? '', groupState: g.state, groupType: 'classic' });
      }
      for (const groupId of store.groupIds()) {
        if (seen.has(groupId)) continue;
        seen.add(groupId);
        listed.push({ groupId, protocolType: '', groupState: 'Empty', groupType: 'classic' });
      }
      for (const g of share()?.listGroups?.() ?? []) {
        if (seen.has(g.groupId)) continue;
        listed.push({ groupId: g.groupId, protocolType: 'share', groupState: g.state, groupType: 'share' });
      }
      const lower = (xs: string[]): string[] => xs.map((x) => x.toLowerCase());
      const groupsOut = listed.filter(
        (g) => (states.length === 0 || lower(states).includes(g.groupState.toLowerCase())) && (types.length === 0 || lower(types).includes(g.groupType)),
      );
      return ListGroupsResponse.create({ errorCode: ErrorCode.NONE, groups: groupsOut });
    },
});
