/// The pool's whole listings (`allPages(of:timeout:)`, `allMemberships`, ...) are `EntitledAsyncSender`'s,
/// shared with `EntitledAsyncConnection`; each page is answered within `timeout`, by default the
/// configuration's `requestTimeout`.
///
/// Each page is a read sent through `send`: on any connection, and again on another node when its
/// connection is lost. The nodes of a cluster agree on the cursors, so the pages may come from different
/// nodes; give `minSeq` (a write's `EntitledResponse.sequence`, kept on every page) for every page to see
/// that write. An error answer is never sent again.
extension EntitledPool: EntitledAsyncSender {}
