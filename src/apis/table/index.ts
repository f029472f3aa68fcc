
export { toTable, hasCustomColumns, type TableApiVersion, type TableOptions, type ToTableOptions } from './table-convertor';
export { humanDuration, shortHumanDuration } from './human-duration';
export { CREATION_TIMESTAMP_DESCRIPTION, OBJECT_NAME_DESCRIPTION, type TableCell, type TableColumnDefinition, type TableRowCondition } from './printer-support';
