/**
 * `carina pki init|copy`: the PKI that every replica of a cluster shares (the cluster CA, the
 * store CA, the service-account key pair, the front-proxy CA; src/certificates/store-pki.ts),
 * made in one place and copied out of band to each member's <data-dir>/pki, as kubeadm's
 * certificates are:
 *
 *   carina pki init --dir DIR          creates what is missing of a new cluster's shared PKI in DIR
 *   carina pki copy --from DIR --to DIR   copies the shared files (never over different ones)
 *
 * Each replica issues its own serving, peer and client certificates from these at start. `init`
 * on the pki directory of a cluster made before the front-proxy CA existed adds one; copy it to
 * the other members before they restart, or each makes its own (all are then trusted).
 */
import { resolve } from 'node:path';
import { CertificateError, SHARED_PKI_FILES, copySharedPki, createSharedPki } from '../certificates';
import { FlagError, formatHelp, parseFlags, type FlagSpec } from './flags';

const INIT_FLAGS: FlagSpec[] = [
  { name: 'dir', kind: 'string', default: '', help: 'The pki directory to create (a member\'s is <data-dir>/pki).' },
  { name: 'help', kind: 'boolean', default: false, help: 'Print this help.' },
];

const COPY_FLAGS: FlagSpec[] = [
  { name: 'from', kind: 'string', default: '', help: 'A pki directory holding the cluster\'s shared PKI (any member\'s <data-dir>/pki).' },
  { name: 'to', kind: 'string', default: '', help: 'The new member\'s pki directory (<data-dir>/pki).' },
  { name: 'help', kind: 'boolean', default: false, help: 'Print this help.' },
];

const USAGE = 'Usage: carina pki init --dir DIR | carina pki copy --from DIR --to DIR (see carina pki <action> --help)\n';

export async function pkiCommand(args: string[]): Promise<number> {
  const [action, ...rest] = args;
  try {
    if (action === 'init') {
      const flags = parseFlags(rest, INIT_FLAGS);
      if (flags.help) {
        process.stdout.write(formatHelp('pki init', `Creates a new cluster's shared PKI (${SHARED_PKI_FILES.join(', ')}) in --dir, keeping what is already there. Copy it to every member's <data-dir>/pki before its first start.`, INIT_FLAGS));
        return 0;
      }
      if (flags.dir === '') throw new FlagError('carina pki init: --dir is required');
      const dir = resolve(flags.dir as string);
      const created = await createSharedPki(dir);
      process.stdout.write(created.length === 0 ? `carina: ${dir} already holds a complete shared PKI\n` : `carina: created ${created.join(', ')} in ${dir}\n`);
      return 0;
    }
    if (action === 'copy') {
      const flags = parseFlags(rest, COPY_FLAGS);
      if (flags.help) {
        process.stdout.write(formatHelp('pki copy', 'Copies the cluster\'s shared PKI into a new member\'s pki directory; refuses to replace a file that differs.', COPY_FLAGS));
        return 0;
      }
      if (flags.from === '' || flags.to === '') throw new FlagError('carina pki copy: --from and --to are required');
      const copied = await copySharedPki(resolve(flags.from as string), resolve(flags.to as string));
      process.stdout.write(copied.length === 0 ? `carina: ${resolve(flags.to as string)} already holds the same shared PKI\n` : `carina: copied ${copied.join(', ')} to ${resolve(flags.to as string)}\n`);
      return 0;
    }
    process.stderr.write(USAGE);
    return action === undefined || action === '--help' || action === 'help' ? 0 : 1;
  } catch (err) {
    if (err instanceof CertificateError || err instanceof FlagError) {
      process.stderr.write(`carina: pki ${action}: ${err.message}\n`);
      return 1;
    }
    throw err;
  }
}
