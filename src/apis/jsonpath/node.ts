/**
 * The nodes of a parsed JSONPath template (k8s.io/client-go util/jsonpath node.go): what the
 * parser builds and the evaluator walks. Plain data; a template can be evaluated any number of
 * times.
 */

export interface ListNode {
  readonly type: 'List';
  readonly nodes: JsonPathNode[];
}

/** One bound of `[start:end:step]`; `derived` marks the end of a single index (`[i]` is `[i:i+1]`). */
export interface SliceParam {
  readonly value: number;
  readonly known: boolean;
  readonly derived: boolean;
}

export type JsonPathNode =
  | ListNode
  | { readonly type: 'Text'; readonly text: string }
  | { readonly type: 'Field'; readonly name: string }
  | { readonly type: 'Array'; readonly params: readonly [SliceParam, SliceParam, SliceParam] }
  | { readonly type: 'Filter'; readonly left: ListNode; readonly right: ListNode; readonly operator: string }
  | { readonly type: 'Int'; readonly value: number }
  | { readonly type: 'Float'; readonly value: number }
  | { readonly type: 'Bool'; readonly value: boolean }
  | { readonly type: 'Wildcard' }
  | { readonly type: 'Recursive' }
  | { readonly type: 'Union'; readonly lists: readonly ListNode[] }
  | { readonly type: 'Identifier'; readonly name: string };
