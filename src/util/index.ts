export { packagePath, packageRoot } from './package-root';
export { AssertionError, assert } from './assert';
