export { SelectorParseError } from './selector-error';
export {
  LabelSelector,
  labelSelectorFromObject,
  labelSelectorFromSet,
  parseLabelSelector,
  type LabelRequirement,
  type LabelSelectorObject,
  type LabelSelectorOperator,
  type LabelSelectorRequirementObject,
  type LabelSet,
} from './label-selector';
export {
  FieldSelector,
  escapeFieldValue,
  parseFieldSelector,
  unescapeFieldValue,
  type FieldLabelConversion,
  type FieldRequirement,
} from './field-selector';
export { customResourceFieldLabelConversion, selectableFields, validateFieldSelector } from './selectable-fields';
export { dns1123SubdomainErrors, labelValueErrors, qualifiedNameErrors } from './qualified-name';
