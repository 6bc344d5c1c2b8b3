import { describe, expect, it } from 'vitest';
import { assignPartitions } from '../../coordinator/share/assignor.js';
import { ManualClock } from '../../coordinator/share/clock.js';
import { ErrorCode } from '../../coordinator/share/share-error.js';
import { ShareGroups } from '../../coordinator/share/share-groups.js';
import { ShareSessions } from '../../coordinator/share/share-sessions.js';
import { shareErrorCode as codeOf } from './support/share-errors.js';

const TOPICS = new Map([
  ['a', { topicId: 'AAAAAAAAAAAAAAAAAAAAAQ', partitions: 4 }],
  ['b', { topicId: 'AAAAAAAAAAAAAAAAAAAAAg', partitions: 1 }],
]);

describe('assignor', () => {
  it('spreads partitions round-robin over the subscribers, sorted by member id', () => {
    const target = assignPartitions(
      [
        { memberId: 'm2', subscribedTopicNames: ['a'] },
        { memberId: 'm1', subscribedTopicNames: ['a', 'b'] },
      ],
      TOPICS,
    );
    expect(target.get('m1')).toEqual(
      new Map([
        ['AAAAAAAAAAAAAAAAAAAAAQ', [0, 2]],
        ['AAAAAAAAAAAAAAAAAAAAAg', [0]],
      ]),
    );
    expect(target.get('m2')).toEqual(new Map([['AAAAAAAAAAAAAAAAAAAAAQ', [1, 3]]]));
  });

  it('shares partitions when there are more members than partitions; unknown topics get nothing', () => {
    const members = ['x', 'y', 'z'].map((memberId) => ({ memberId, subscribedTopicNames: ['b', 'missing'] }));
    const target = assignPartitions(members, TOPICS);
    for (const m of ['x', 'y', 'z']) expect(target.get(m)).toEqual(new Map([['AAAAAAAAAAAAAAAAAAAAAg', [0]]]));
  });
});

describe('ShareGroups', () => {
  const input = (memberId: string, memberEpoch: number, topics: string[] | null = null) => ({
    groupId: 'g',
    memberId,
    memberEpoch,
    rackId: null,
    subscribedTopicNames: topics,
    clientId: 'c',
    clientHost: '127.0.0.1',
  });

  it('bumps the group epoch on membership and subscription changes and hands out the new assignment', () => {
    const groups = new ShareGroups(new ManualClock(), { topicByName: (n) => TOPICS.get(n) }, 45_000);
    expect(groups.heartbeat(input('m1', 0, ['a']))).toMatchObject({ memberEpoch: 1 });
    expect(groups.heartbeat(input('m1', 1, ['a', 'b'])).memberEpoch).toBe(2);
    expect(groups.heartbeat(input('m1', 2)).assignment).toBeNull();
    const left = groups.heartbeat(input('m1', -1));
    expect(left).toEqual({ memberEpoch: -1, assignment: null, left: true });
    expect(groups.heartbeat(input('m1', -1)).left).toBe(false); // leaving twice is harmless
    expect(groups.group('g')!.members.size).toBe(0);
  });

  it('a member rejoining with epoch 0 starts over; bad epochs and ids are refused', () => {
    const groups = new ShareGroups(new ManualClock(), { topicByName: (n) => TOPICS.get(n) }, 45_000);
    groups.heartbeat(input('m1', 0, ['a']));
    expect(groups.heartbeat(input('m1', 0, ['a'])).assignment).not.toBeNull();
    expect(codeOf(() => groups.heartbeat(input('m1', 5)))).toBe(ErrorCode.FENCED_MEMBER_EPOCH);
    expect(codeOf(() => groups.heartbeat(input('m9', 1)))).toBe(ErrorCode.UNKNOWN_MEMBER_ID);
    expect(codeOf(() => groups.heartbeat(input('m1', -2)))).toBe(ErrorCode.INVALID_REQUEST);
    expect(codeOf(() => groups.heartbeat({ ...input('m1', 0, ['a']), groupId: '' }))).toBe(ErrorCode.INVALID_GROUP_ID);
    expect(codeOf(() => groups.heartbeat(input('m2', 0, [])))).toBe(ErrorCode.INVALID_REQUEST);
  });

  it('notices new partitions of a subscribed topic', () => {
    const topics = new Map(TOPICS);
    const groups = new ShareGroups(new ManualClock(), { topicByName: (n) => topics.get(n) }, 45_000);
    groups.heartbeat(input('m1', 0, ['b']));
    topics.set('b', { topicId: 'AAAAAAAAAAAAAAAAAAAAAg', partitions: 2 });
    const next = groups.heartbeat(input('m1', 1));
    expect(next.memberEpoch).toBe(2);
    expect(next.assignment).toEqual([{ topicId: 'AAAAAAAAAAAAAAAAAAAAAg', partitions: [0, 1] }]);
  });

  it('expires members silent for the session timeout', () => {
    const clock = new ManualClock();
    const groups = new ShareGroups(clock, { topicByName: (n) => TOPICS.get(n) }, 45_000);
    groups.heartbeat(input('m1', 0, ['a']));
    groups.heartbeat(input('m2', 0, ['a']));
    clock.advance(30_000);
    groups.heartbeat(input('m2', 2));
    clock.advance(15_000);
    expect(groups.expireMembers()).toEqual([{ groupId: 'g', memberId: 'm1' }]);
    expect(groups.memberEpoch('g', 'm1')).toBeUndefined();
    expect(groups.isUnknownMember('g', 'm1')).toBe(true); // ShareFetch/ShareAcknowledge refuse it
    expect(groups.isUnknownMember('g', 'm2')).toBe(false);
    expect(groups.isUnknownMember('other', 'm1')).toBe(false); // a group not known here says nothing
    expect(groups.heartbeat(input('m2', 2)).memberEpoch).toBe(3); // the group rebalanced without m1
  });
});

describe('ShareSessions', () => {
  it('opens, checks and advances epochs, wrapping from INT32_MAX to 1', () => {
    const sessions = new ShareSessions(10);
    const { session } = sessions.open('g', 'm', 1);
    expect(session.epoch).toBe(1);
    expect(codeOf(() => sessions.find('g', 'm', 2))).toBe(ErrorCode.INVALID_SHARE_SESSION_EPOCH);
    expect(codeOf(() => sessions.find('g', 'x', 1))).toBe(ErrorCode.SHARE_SESSION_NOT_FOUND);
    expect(sessions.find('g', 'm', -1)).toBe(session); // closing needs no epoch match
    session.epoch = 0x7fffffff;
    sessions.advance(session);
    expect(session.epoch).toBe(1);
  });

  it('replaces a member’s session on re-open and enforces the session limit', () => {
    const sessions = new ShareSessions(1);
    const first = sessions.open('g', 'm', 1).session;
    expect(sessions.open('g', 'm', 2).replaced).toBe(first);
    expect(codeOf(() => sessions.open('g', 'other', 3))).toBe(ErrorCode.SHARE_SESSION_LIMIT_REACHED);
    expect(sessions.onConnection(2)).toHaveLength(1);
    expect(sessions.onConnection(1)).toHaveLength(0);
  });
});
