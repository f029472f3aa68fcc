/**
 * The one error type of the Protobuf codec. The HTTP layer matches on `reason` to choose the
 * Status it answers with: a body it cannot read is the client's fault (400 or 415), a kind with no
 * Protobuf form is a negotiation failure (406), an object the codec cannot write is Carina's (500).
 */
export type ProtobufCodecErrorReason =
  /** The body does not start with the 4 bytes `k8s\0`. */
  | 'BadPrefix'
  /** The apiVersion/kind has no Protobuf message in Kubernetes v1.25. */
  | 'UnknownKind'
  /** The bytes are not a valid encoding of the expected message. */
  | 'Malformed'
  /** A JSON value does not fit the field it belongs to (wrong JSON type, bad time or duration). */
  | 'NotRepresentable';

export class ProtobufCodecError extends Error {
  override name = 'ProtobufCodecError';

  constructor(
    readonly reason: ProtobufCodecErrorReason,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}
