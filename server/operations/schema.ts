import * as z from 'zod';
import { maintenanceBody } from '../contract/inputs/operations.js';
import { isTimeZone, serverTimeZone } from './maintenance-windows.js';

/** PUT /api/hosts/:id/maintenance: without a zone, the server's own. */
export const MaintenanceBody = z.lazy(() => maintenanceBody(serverTimeZone(), isTimeZone));
