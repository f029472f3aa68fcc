/**
 * A label or field selector kube-apiserver would refuse. The message is exactly the text
 * kube-apiserver v1.25 puts in the Status `message` of its 400 answer: the list, watch and
 * deletecollection handlers wrap the parser's error in `errors.NewBadRequest(err.Error())` and add
 * nothing to it.
 */
export class SelectorParseError extends Error {
  override name = 'SelectorParseError';
  readonly code = 400;
  readonly reason = 'BadRequest';
}
