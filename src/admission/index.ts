export { AdmissionChain, type AdmissionAttributes, type AdmissionOperation, type AdmissionPlugin, type SideEffects } from './admission-chain';
