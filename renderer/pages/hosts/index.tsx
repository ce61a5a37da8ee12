export { HostsPage } from './HostList';
export { HostDetailPage } from './HostDetail';
