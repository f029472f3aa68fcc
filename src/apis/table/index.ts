export { toTable, hasCustomColumns, type TableApiVersion, type TableOptions, type ToTableOptions } from './table-convertor';
export { humanDuration, shortHumanDuration } from './human-duration';
export type { JsonObject, TableCell, TableColumnDefinition, TableRowCondition } from './printer-support';
