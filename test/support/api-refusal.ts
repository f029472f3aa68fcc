/**
 * The ApiError a call inside the server is refused with, for tests that drive src/ in process
 * (admission, webhooks, the registry) and check the Status it would become.
 */
import { expect } from 'chai';
import { ApiError } from '../../src/util';

/** Resolves with the ApiError `work` fails with; fails the test if it succeeds, and passes any other error on. */
export async function refusal(work: Promise<unknown>): Promise<ApiError> {
  try {
    await work;
  } catch (err) {
    if (err instanceof ApiError) return err;
    throw err;
  }
  expect.fail('expected the call to be refused with an ApiError');
}
