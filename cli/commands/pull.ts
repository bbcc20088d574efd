// `sessync pull`: merges entries from the server into the local session files.
import { syncCommand } from '../sync/run-command.js';

export default syncCommand('pull', 'Pull entries from the server into this project\'s sessions (or <ref>, or --all), creating sessions new here.');
