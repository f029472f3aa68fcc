/**
 * Printers for certificates, admission webhooks, API priority and fairness, storage versions
 * and APIServices, after kubernetes pkg/printers/internalversion/printers.go (v1.25) and, for
 * APIService, kube-aggregator's own table convertor (pkg/registry/apiservice/etcd).
 */
import { humanDuration } from './human-duration';
import { listWithMore } from './namespaced-printers';
import {
  AGE_COLUMN,
  NAME_COLUMN,
  ageOf,
  asArray,
  asNumber,
  asString,
  at,
  column,
  compareBytes,
  type KindPrinter,
  type TableCell,
} from './printer-support';
import { type JsonObject, nameOf, objectOrEmpty } from '../object';

// ---------------------------------------------------------------- certificates.k8s.io

// certificates/v1beta1 CertificateSigningRequestSpec/Status SwaggerDoc, which AddHandlers quotes.
const CSR_SIGNER_NAME_DESCRIPTION =
  'Requested signer for the request. It is a qualified name in the form: `scope-hostname.io/name`. If empty, it will be defaulted:\n 1. If it\'s a kubelet client certificate, it is assigned\n    "kubernetes.io/kube-apiserver-client-kubelet".\n 2. If it\'s a kubelet serving certificate, it is assigned\n    "kubernetes.io/kubelet-serving".\n 3. Otherwise, it is assigned "kubernetes.io/legacy-unknown".\nDistribution of trust for signers happens out of band. You can select on this field using `spec.signerName`.';
const CSR_EXPIRATION_DESCRIPTION =
  'expirationSeconds is the requested duration of validity of the issued certificate. The certificate signer may issue a certificate with a different validity duration so a client must check the delta between the notBefore and and notAfter fields in the issued certificate to determine the actual duration.\n\nThe v1.22+ in-tree implementations of the well-known Kubernetes signers will honor this field as long as the requested duration is not greater than the maximum duration they will honor per the --cluster-signing-duration CLI flag to the Kubernetes controller manager.\n\nCertificate signers may not honor this field for various reasons:\n\n  1. Old signer that is unaware of the field (such as the in-tree\n     implementations prior to v1.22)\n  2. Signer whose configured maximum is shorter than the requested duration\n  3. Signer whose configured minimum is longer than the requested duration\n\nThe minimum valid value for expirationSeconds is 600, i.e. 10 minutes.';

export const certificateSigningRequestPrinter: KindPrinter = {
  columns: [
    NAME_COLUMN,
    AGE_COLUMN,
    column('SignerName', 'string', CSR_SIGNER_NAME_DESCRIPTION),
    column('Requestor', 'string', 'Base64-encoded PKCS#10 CSR data'),
    column('RequestedDuration', 'string', CSR_EXPIRATION_DESCRIPTION),
    column('Condition', 'string', 'Conditions applied to the request, such as approval or denial.'),
  ],
  printRow(request, context) {
    const spec = objectOrEmpty(request['spec']);
    const expirationSeconds = spec['expirationSeconds'];
    return {
      cells: [
        nameOf(request),
        ageOf(request, context),
        asString(spec['signerName']) || '<none>',
        asString(spec['username']),
        typeof expirationSeconds === 'number' ? humanDuration(expirationSeconds * 1000) : '<none>',
        csrCondition(request),
      ],
    };
  },
};

/** extractCSRStatus: Denied over Approved over Pending, then ",Failed" and ",Issued". */
function csrCondition(request: JsonObject): string {
  const types = new Set(asArray(at(request, 'status', 'conditions')).map((condition) => asString(objectOrEmpty(condition)['type'])));
  let status = types.has('Denied') ? 'Denied' : types.has('Approved') ? 'Approved' : 'Pending';
  if (types.has('Failed')) status += ',Failed';
  if (asString(at(request, 'status', 'certificate')) !== '') status += ',Issued';
  return status;
}

// ---------------------------------------------------------------- admissionregistration.k8s.io

export const webhookConfigurationPrinter: KindPrinter = {
  columns: [NAME_COLUMN, column('Webhooks', 'integer', 'Webhooks indicates the number of webhooks registered in this configuration'), AGE_COLUMN],
  printRow: (configuration, context) => ({
    cells: [nameOf(configuration), asArray(configuration['webhooks']).length, ageOf(configuration, context)],
  }),
};

// ---------------------------------------------------------------- flowcontrol.apiserver.k8s.io

export const flowSchemaPrinter: KindPrinter = {
  columns: [
    NAME_COLUMN,
    column('PriorityLevel', 'string', '`name` is the name of the priority level configuration being referenced Required.'),
    column(
      'MatchingPrecedence',
      'string',
      '`matchingPrecedence` is used to choose among the FlowSchemas that match a given request. The chosen FlowSchema is among those with the numerically lowest (which we take to be logically highest) MatchingPrecedence.  Each MatchingPrecedence value must be ranged in [1,10000]. Note that if the precedence is not specified, it will be set to 1000 as default.',
    ),
    column(
      'DistinguisherMethod',
      'string',
      '`distinguisherMethod` defines how to compute the flow distinguisher for requests that match this schema. `nil` specifies that the distinguisher is disabled and thus will always be the empty string.',
    ),
    AGE_COLUMN,
    column('MissingPL', 'string', 'references a broken or non-existent PriorityLevelConfiguration'),
  ],
  printRow(flowSchema, context) {
    const spec = objectOrEmpty(flowSchema['spec']);
    const distinguisher = spec['distinguisherMethod'];
    const dangling = asArray(at(flowSchema, 'status', 'conditions'))
      .map(objectOrEmpty)
      .find((condition) => asString(condition['type']) === 'Dangling');
    return {
      cells: [
        nameOf(flowSchema),
        asString(at(spec, 'priorityLevelConfiguration', 'name')),
        asNumber(spec['matchingPrecedence']),
        distinguisher === undefined || distinguisher === null ? '<none>' : asString(objectOrEmpty(distinguisher)['type']),
        ageOf(flowSchema, context),
        dangling === undefined ? '?' : asString(dangling['status']),
      ],
    };
  },
  // printFlowSchemaList sorts a list as FlowSchemaSequence: by precedence, then by name.
  order: (flowSchemas) =>
    [...flowSchemas].sort(
      (a, b) => asNumber(at(a, 'spec', 'matchingPrecedence')) - asNumber(at(b, 'spec', 'matchingPrecedence')) || compareBytes(nameOf(a), nameOf(b)),
    ),
};

export const priorityLevelConfigurationPrinter: KindPrinter = {
  columns: [
    NAME_COLUMN,
    column(
      'Type',
      'string',
      '`type` indicates whether this priority level is subject to limitation on request execution.  A value of `"Exempt"` means that requests of this priority level are not subject to a limit (and thus are never queued) and do not detract from the capacity made available to other priority levels.  A value of `"Limited"` means that (a) requests of this priority level _are_ subject to limits and (b) some of the server\'s limited capacity is made available exclusively to this priority level. Required.',
    ),
    column(
      'AssuredConcurrencyShares',
      'string',
      '`assuredConcurrencyShares` (ACS) configures the execution limit, which is a limit on the number of requests of this priority level that may be exeucting at a given time.  ACS must be a positive number. The server\'s concurrency limit (SCL) is divided among the concurrency-controlled priority levels in proportion to their assured concurrency shares. This produces the assured concurrency value (ACV) --- the number of requests that may be executing at a time --- for each such priority level:\n\n            ACV(l) = ceil( SCL * ACS(l) / ( sum[priority levels k] ACS(k) ) )\n\nbigger numbers of ACS mean more reserved concurrent requests (at the expense of every other PL). This field has a default value of 30.',
    ),
    column(
      'Queues',
      'string',
      '`queues` is the number of queues for this priority level. The queues exist independently at each apiserver. The value must be positive.  Setting it to 1 effectively precludes shufflesharding and thus makes the distinguisher method of associated flow schemas irrelevant.  This field has a default value of 64.',
    ),
    column(
      'HandSize',
      'string',
      "`handSize` is a small positive number that configures the shuffle sharding of requests into queues.  When enqueuing a request at this priority level the request's flow identifier (a string pair) is hashed and the hash value is used to shuffle the list of queues and deal a hand of the size specified here.  The request is put into one of the shortest queues in that hand. `handSize` must be no larger than `queues`, and should be significantly smaller (so that a few heavy flows do not saturate most of the queues).  See the user-facing documentation for more extensive guidance on setting this field.  This field has a default value of 8.",
    ),
    column(
      'QueueLengthLimit',
      'string',
      '`queueLengthLimit` is the maximum number of requests allowed to be waiting in a given queue of this priority level at a time; excess requests are rejected.  This value must be positive.  If not specified, it will be defaulted to 50.',
    ),
    AGE_COLUMN,
  ],
  printRow(priorityLevel, context) {
    const spec = objectOrEmpty(priorityLevel['spec']);
    // Integers where kube has them, "<none>" for an exempt level or one without queuing.
    let shares: TableCell = '<none>';
    let queues: TableCell = '<none>';
    let handSize: TableCell = '<none>';
    let queueLengthLimit: TableCell = '<none>';
    const limited = spec['limited'];
    if (limited !== undefined && limited !== null) {
      shares = asNumber(objectOrEmpty(limited)['assuredConcurrencyShares']);
      const queuing = at(limited, 'limitResponse', 'queuing');
      if (queuing !== undefined && queuing !== null) {
        queues = asNumber(objectOrEmpty(queuing)['queues']);
        handSize = asNumber(objectOrEmpty(queuing)['handSize']);
        queueLengthLimit = asNumber(objectOrEmpty(queuing)['queueLengthLimit']);
      }
    }
    return { cells: [nameOf(priorityLevel), asString(spec['type']), shares, queues, handSize, queueLengthLimit, ageOf(priorityLevel, context)] };
  },
};

// ---------------------------------------------------------------- internal.apiserver.k8s.io

export const storageVersionPrinter: KindPrinter = {
  columns: [
    NAME_COLUMN,
    column(
      'CommonEncodingVersion',
      'string',
      'If all API server instances agree on the same encoding storage version, then this field is set to that version. Otherwise this field is left empty. API servers should finish updating its storageVersionStatus entry before serving write operations, so that this field will be in sync with the reality.',
    ),
    column('StorageVersions', 'string', 'The reported versions per API server instance.'),
    AGE_COLUMN,
  ],
  printRow(storageVersion, context) {
    const common = at(storageVersion, 'status', 'commonEncodingVersion');
    const versions = asArray(at(storageVersion, 'status', 'storageVersions'))
      .map(objectOrEmpty)
      .map((version) => `${asString(version['apiServerID'])}=${asString(version['encodingVersion'])}`);
    return {
      cells: [nameOf(storageVersion), typeof common === 'string' ? common : '<unset>', listWithMore(versions), ageOf(storageVersion, context)],
    };
  },
};

// ---------------------------------------------------------------- apiregistration.k8s.io

export const apiServicePrinter: KindPrinter = {
  columns: [
    NAME_COLUMN,
    column('Service', 'string', 'The reference to the service that hosts this API endpoint.'),
    column('Available', 'string', 'Whether this service is available.'),
    AGE_COLUMN,
  ],
  printRow(apiService, context) {
    const service = at(apiService, 'spec', 'service');
    const serviceCell =
      service === undefined || service === null ? 'Local' : `${asString(objectOrEmpty(service)['namespace'])}/${asString(objectOrEmpty(service)['name'])}`;
    const available = asArray(at(apiService, 'status', 'conditions'))
      .map(objectOrEmpty)
      .find((condition) => asString(condition['type']) === 'Available');
    let availableCell = 'Unknown';
    if (available !== undefined) {
      const status = asString(available['status']);
      const reason = asString(available['reason']);
      availableCell = status !== 'True' && reason !== '' ? `${status} (${reason})` : status;
    }
    return { cells: [nameOf(apiService), serviceCell, availableCell, ageOf(apiService, context)] };
  },
};
