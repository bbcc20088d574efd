// `sessync push`: sends local entries the server lacks.
import { syncCommand } from '../sync/run-command.js';

export default syncCommand('push', 'Push new local entries of this project\'s sessions (or <ref>, or --all) to the server.');
