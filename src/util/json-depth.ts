/**
 * How deeply a decoded document nests, checked without recursion. Bodies are refused beyond
 * MAX_BODY_DEPTH before any recursive code (patching, validation, serialization) walks them:
 * Node's own JSON.stringify and structuredClone overflow the stack a few thousand levels down,
 * and no Kubernetes object needs more than a few dozen levels.
 */

export const MAX_BODY_DEPTH = 1000;

/** True when `value` nests objects or arrays more than `limit` levels deep. */
export function nestsDeeperThan(value: unknown, limit: number): boolean {
  const stack: Array<{ value: unknown; depth: number }> = [{ value, depth: 0 }];
  while (stack.length > 0) {
    const { value: current, depth } = stack.pop() as { value: unknown; depth: number };
    if (current === null || typeof current !== 'object') continue;
    if (depth + 1 > limit) return true;
    const children = Array.isArray(current) ? current : Object.values(current as Record<string, unknown>);
    for (const child of children) if (child !== null && typeof child === 'object') stack.push({ value: child, depth: depth + 1 });
  }
  return false;
}
