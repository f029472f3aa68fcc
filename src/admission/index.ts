export { AdmissionChain, type AdmissionAttributes, type AdmissionOperation, type AdmissionPlugin, type AdmissionRecorder, type SideEffects } from './admission-chain';
