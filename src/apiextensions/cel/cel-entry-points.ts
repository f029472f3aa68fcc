/**
 * The CEL rules' entry points for the rest of src/apiextensions, loading the rule modules (and
 * @bufbuild/cel and @bufbuild/protobuf under them, about 0.1 s of CPU) at the first
 * call: a replica whose store holds no CRD never compiles a rule, and a restart should not pay
 * for it (issue 32). Each function is the module's own, with its signature and behaviour.
 */
/* eslint-disable @typescript-eslint/no-require-imports */
import type * as RuleCompiler from './rule-compiler';
import type * as RuleValidator from './rule-validator';
import type * as SchemaRules from './schema-rules';

let compilerModule: typeof RuleCompiler | undefined;
let validatorModule: typeof RuleValidator | undefined;
let schemaRulesModule: typeof SchemaRules | undefined;

/** rule-compiler.ts's compileRule. */
export function compileRule(...args: Parameters<typeof RuleCompiler.compileRule>): ReturnType<typeof RuleCompiler.compileRule> {
  compilerModule ??= require('./rule-compiler') as typeof RuleCompiler;
  return compilerModule.compileRule(...args);
}

/** rule-validator.ts's validateRules. */
export function validateRules(...args: Parameters<typeof RuleValidator.validateRules>): ReturnType<typeof RuleValidator.validateRules> {
  validatorModule ??= require('./rule-validator') as typeof RuleValidator;
  return validatorModule.validateRules(...args);
}

/** schema-rules.ts's validateSchemaRules. */
export function validateSchemaRules(...args: Parameters<typeof SchemaRules.validateSchemaRules>): ReturnType<typeof SchemaRules.validateSchemaRules> {
  schemaRulesModule ??= require('./schema-rules') as typeof SchemaRules;
  return schemaRulesModule.validateSchemaRules(...args);
}
