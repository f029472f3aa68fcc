/**
 * A template kubectl's JSONPath refuses to parse (`ParseError`), or a failure while walking a
 * value with it (`ExecuteError`). The message is k8s.io/client-go util/jsonpath's own text
 * ("unclosed action", "array index out of bounds: index 5, length 2"), which kubectl prints.
 */
export type JsonPathErrorCode = 'ParseError' | 'ExecuteError';

export class JsonPathError extends Error {
  override name = 'JsonPathError';

  constructor(readonly code: JsonPathErrorCode, message: string) {
    super(message);
  }
}
