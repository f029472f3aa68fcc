/**
 * kubectl's JSONPath (k8s.io/client-go util/jsonpath, as kube-apiserver v1.25 vendors it), parsed
 * and walked by our own code: the printer columns of custom resources read their cells with it.
 *
 * @example
 *   const path = JsonPath.parse('{.status.conditions[?(@.type=="Ready")].status}');
 *   path.findResults(object, { allowMissingKeys: true }); // [["True"]]
 */
export { JsonPath, type FindOptions } from './jsonpath';
export { JsonPathError, type JsonPathErrorCode } from './jsonpath-error';
export { goSprint } from './go-value';
