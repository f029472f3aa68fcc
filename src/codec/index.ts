export { ProtobufCodec } from './protobuf-codec';
export type { JsonObject, TypeName, WatchEventJson } from './protobuf-codec';
export { ProtobufCodecError } from './protobuf/protobuf-codec-error';
export type { ProtobufCodecErrorReason } from './protobuf/protobuf-codec-error';
export { YamlCodecError, compareYamlV2Keys, fromYaml, toYaml } from './yaml-codec';
export type { YamlCodecErrorReason } from './yaml-codec';
export { yamlDuplicateKeysError } from './yaml-duplicate-keys';
