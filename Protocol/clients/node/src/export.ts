// A whole export (PROTOCOL.md §6 export): a full copy of the store as of one change, read page after page.
// The server that answers the first page holds the copy (for 300 s after each read, at most 4 at a time),
// so every page must go to it: the reader keeps one connection of its own for the whole export, and does
// not send a page again elsewhere (another node would answer `not_found`). A consumer copies every page,
// then follows the change feed after the export's `seq` (`Client.follow`): nothing is missed.

import { Connection, Line } from './connection.js';
import { Catalog, ExportPage, Membership } from './types.js';

/** Opens a connection of the client's pool for the export alone. */
export type ExportOpener = (signal?: AbortSignal) => Promise<{ connection: Connection }>;

/** @internal How an export is read: set by `Client.openExport` from its options. */
export interface ExportSettings {
  /** The `limit` of each page; the server's default (1000) when absent. */
  pageSize?: number;
  /** Add the audit trail of each page's memberships. */
  history?: boolean;
  /** Milliseconds each page may take; 0 waits forever. */
  timeoutMs: number;
  signal?: AbortSignal;
}

/** An `export` answer, typed; fields a newer server adds are kept. */
export function exportPage(answer: Line): ExportPage {
  const { ok: _ok, id: _id, ...page } = answer;
  return page as unknown as ExportPage;
}

/**
 * A full copy of the store as of change `seq`, its first page read (`Client.openExport`). Iterate it once:
 * `for await (const page of reader)` for the pages (memberships, and with `history` their audit trail), or
 * `reader.memberships()` for the memberships alone, in creation order. Its connection closes after the last
 * page, when the loop is left, or on `close()`. A lost connection throws `ConnectionClosedError`: open another
 * export (the server drops the abandoned copy 300 s after its last read).
 */
export class ExportReader implements AsyncIterable<ExportPage> {
  /** The change the copy is as of: follow the feed after it (`Client.follow({ afterSeq: reader.seq })`). */
  readonly seq: number;
  /** When the copy's statuses were computed. */
  readonly time: string;
  /** The catalog as of the copy. */
  readonly catalog: Catalog;

  private readonly connection: Connection;
  private readonly settings: ExportSettings;
  private readonly onClose: () => void;
  private first: ExportPage | undefined;
  private closed = false;

  private constructor(connection: Connection, first: ExportPage, settings: ExportSettings, onClose: () => void) {
    this.connection = connection;
    this.first = first;
    this.settings = settings;
    this.onClose = onClose;
    this.seq = first.export.seq;
    this.time = first.export.time;
    this.catalog = first.entitlements ?? {};
  }

  /** @internal Use `Client.openExport`: takes the copy (the first page) on a connection of its own. */
  static async open(opener: ExportOpener, settings: ExportSettings, onClose: () => void): Promise<ExportReader> {
    const { connection } = await opener(settings.signal);
    try {
      const first = await ExportReader.page(connection, settings, undefined);
      return new ExportReader(connection, first, settings, onClose);
    } catch (error) {
      connection.destroy();
      throw error;
    }
  }

  [Symbol.asyncIterator](): AsyncGenerator<ExportPage, void, undefined> {
    return this.pages();
  }

  /** Every page, the first (already read, with the catalog) included; each page is read when the last is taken. */
  async *pages(): AsyncGenerator<ExportPage, void, undefined> {
    let page = this.first;
    if (page === undefined) throw new TypeError(this.closed ? 'the export is closed' : 'an export is read once');
    this.first = undefined;
    try {
      yield page;
      while (page.next !== undefined && !this.closed) {
        page = await ExportReader.page(this.connection, this.settings, page.next);
        yield page;
      }
    } finally {
      await this.close();
    }
  }

  /** Every membership of the copy, in creation order, each as of change `seq`. */
  async *memberships(): AsyncGenerator<Membership, void, undefined> {
    for await (const page of this.pages()) yield* page.memberships;
  }

  /** Closes the export's connection (the server drops the copy 300 s after its last read). */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.first = undefined;
    this.onClose();
    await this.connection.close();
  }

  private static async page(connection: Connection, settings: ExportSettings, after: string | undefined): Promise<ExportPage> {
    const fields = { after, limit: settings.pageSize, history: settings.history };
    return exportPage(await connection.call('export', fields, { timeoutMs: settings.timeoutMs, signal: settings.signal }));
  }
}
