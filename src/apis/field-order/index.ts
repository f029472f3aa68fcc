/**
 * The field order of kube-apiserver v1.25's JSON: Go struct order for built-in kinds, sorted
 * keys for custom resources and Go maps (field-order.ts), from generated data
 * (generate-field-order.ts, src/apis/data/field-order/).
 */
export { compareGoStrings, inGoOrder, isBuiltInKind, objectMetaFields, withSortedKeys, FIELD_ORDER_DATA_PATH, type FieldOrderData } from './field-order';
