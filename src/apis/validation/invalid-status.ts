/**
 * The metav1.Status body of kube-apiserver's 422 answer (apierrors.NewInvalid), with the key order
 * and omitted empty fields of its JSON encoding.
 */
import { FieldError, fieldErrorBody, invalidMessage, qualifiedKind } from './field-error';

export interface StatusCause {
  reason: string;
  message?: string;
  field?: string;
}

export interface InvalidStatus {
  kind: 'Status';
  apiVersion: 'v1';
  metadata: Record<string, never>;
  status: 'Failure';
  message: string;
  reason: 'Invalid';
  details: { name?: string; group?: string; kind: string; causes: StatusCause[] };
  code: 422;
}

export function invalidStatus(group: string, kind: string, name: string, errors: FieldError[]): InvalidStatus {
  const causes = errors.map((e): StatusCause => {
    const cause: StatusCause = { reason: e.type };
    const message = fieldErrorBody(e);
    if (message !== '') cause.message = message;
    if (e.field !== '') cause.field = e.field;
    return cause;
  });
  // StatusDetails encodes name, group, kind, causes in that order, dropping empty name and group.
  const details: InvalidStatus['details'] = { ...(name !== '' ? { name } : {}), ...(group !== '' ? { group } : {}), kind, causes };
  return {
    kind: 'Status',
    apiVersion: 'v1',
    metadata: {},
    status: 'Failure',
    message: invalidMessage(qualifiedKind(group, kind), name, errors),
    reason: 'Invalid',
    details,
    code: 422,
  };
}
