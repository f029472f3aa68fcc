/**
 * `carina` with a store fault, for the process tests of the consistency checks:
 *
 *   node dist/test/support/carina-with-store-damage.js --damage-store-after-index=N server <flags>
 *
 * runs the `carina` command of this build (src/cli/main.ts) with the embedded store's state
 * machine wrapped in a StoreDamage that damages one value in memory once a batch reaching log
 * index N has applied. Its line about the damage goes to stderr with the replica's own.
 */
import { runCarina } from '../../src/cli/main';
import { StoreDamage } from './store-damage';

const FLAG = '--damage-store-after-index=';

const [first, ...command] = process.argv.slice(2);
const index = first?.startsWith(FLAG) ? Number(first.slice(FLAG.length)) : NaN;
if (!Number.isSafeInteger(index) || index <= 0) {
  process.stderr.write(`usage: carina-with-store-damage.js ${FLAG}<log index> <carina command and flags>\n`);
  process.exit(2);
}
const damage = new StoreDamage((line) => process.stderr.write(`${line}\n`));
damage.damageAfterIndex(index);
runCarina(command, { wrapStateMachine: damage.wrap });
