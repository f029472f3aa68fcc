export {
  apply, applyConflictMessage, applyConflictStatus, ApplyConflictError, describeManager, fieldsOf, managerFromUserAgent, updateManagedFields, type ApplyConflict, type ApplyOptions, type ManagedFieldsConverter, type UpdateOptions,
} from './apply';
export {
  FieldSet, FieldSetDecodeError, comparePathElements, fieldElement, indexElement, keyElement, valueElement, pathToString, parsePathElement, serializePathElement,
  type FieldPath, type KeyField, type PathElement,
} from './field-set';
export {
  decodeManagedFields, encodeManagedFields, isManagedFieldsReset, managerKey, ManagedFieldsDecodeError,
  type ManagedFieldSets, type ManagedFieldsEntry, type ManagedFieldsOperation, type ManagerFields, type ManagerIdentity,
} from './managed-fields';
export { topologyForKind, topologyFromSchema, UNTYPED, type ChildTopology, type ListType, type TopologyNode } from './schema-topology';
export { ApplyTypeError } from './structured-value';
