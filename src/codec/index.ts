export { ProtobufCodec } from './protobuf-codec';
export type { TypeName, WatchEventJson } from './protobuf-codec';
export { ProtobufCodecError } from './protobuf/protobuf-codec-error';
export type { ProtobufCodecErrorReason } from './protobuf/protobuf-codec-error';
export { EXPANDED_TEXT_BYTES_MAX, YamlCodecError, compareYamlV2Keys, decodeYaml, fromYaml, toYaml } from './yaml-codec';
export type { DecodedYaml, YamlCodecErrorReason } from './yaml-codec';
export { YamlBodyDecoder } from './yaml-body-decoder';
export type { YamlBodyDecoderOptions } from './yaml-body-decoder';
