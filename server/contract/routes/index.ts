import type { AnswerOf, BodyOf, ParamsOf, QueryOf } from '../route.js';
import { accessRoutes } from './access.js';
import { fleetRoutes } from './fleet.js';
import { campaignRoutes } from './campaigns.js';
import { collectionRoutes } from './collections.js';
import { hostRoutes } from './hosts.js';
import { provisioningRoutes } from './provisioning.js';
import { registryRoutes } from './registry.js';
import { scriptRoutes } from './scripts.js';
import { storageRoutes } from './storage.js';
import { systemRoutes } from './system.js';

/**
 * Every route of the server, keyed `METHOD /path`: the route table registers exactly these (a test
 * holds it to that), the dashboard's `api()` calls them by key, the API document lists them.
 */
export const ROUTES = { ...registryRoutes, ...collectionRoutes, ...hostRoutes, ...provisioningRoutes, ...scriptRoutes, ...storageRoutes, ...campaignRoutes, ...fleetRoutes, ...accessRoutes, ...systemRoutes } as const;
export type Routes = typeof ROUTES;
export type RouteKey = keyof Routes;

export type RouteParams<K extends RouteKey> = ParamsOf<K, Routes[K]>;
export type RouteQuery<K extends RouteKey> = QueryOf<Routes[K]>;
export type RouteBody<K extends RouteKey> = BodyOf<Routes[K]>;
export type RouteAnswer<K extends RouteKey> = AnswerOf<Routes[K]>;
