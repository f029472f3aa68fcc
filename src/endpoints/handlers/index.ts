/** One handler per verb (apiserver pkg/endpoints/handlers): each turns a request scope into registry calls and one response. */
export { get } from './get';
export { list } from './list';
export { watch } from './watch';
export { create } from './create';
export { update } from './update';
export { patch } from './patch';
export { deleteObject } from './delete';
export { deleteCollection } from './deletecollection';
export { connect, isConnectSubresource, type ConnectAdmissionAttributes, type ConnectConfig } from './connect';
