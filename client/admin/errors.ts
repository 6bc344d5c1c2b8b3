/**
 * A topic name or id the Admin will not send (Kafka's topicNameIsUnrepresentable):
 * the entry fails without asking the broker. Every other entry error comes from
 * client/errors.ts's errorFromCode, which gives the codes users catch by class
 * (TopicExistsError, UnknownTopicOrPartitionError, ...) their own types.
 */
import { Errors, InvalidTopicError } from '../errors.js';
import type { EntryError } from './result.js';

/** InvalidTopicError for a name or id the client will not send, without asking the broker. */
export function unrepresentable(what: string, value: string): EntryError {
  return new InvalidTopicError(Errors.INVALID_TOPIC_EXCEPTION, `The given ${what} '${value}' cannot be represented in a request.`);
}
