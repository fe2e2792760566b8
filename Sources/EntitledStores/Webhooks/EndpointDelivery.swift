import EntitledClient
import Foundation
import Logging

/// Delivers the change feed to one endpoint: reads the feed after the endpoint's cursor, sends each change
/// that passes its filter as a signed message, at most `concurrency` at once, one at a time per subject and
/// in the feed's order, tries a failed one again with backoff for the retry period, and keeps its progress
/// in its state file. Each endpoint has its own, with its own connection to the feed: a slow or failing
/// endpoint holds up no other.
///
/// At least once: the cursor moves past a message only once it is delivered (or given up), and is written
/// down at most `persistInterval` after; a crash in between delivers those messages again, with the same
/// `webhook-id`. Bounded: at most `maximumQueued` messages read ahead of the cursor, whatever the backlog.
public actor EndpointDelivery {
    public let endpoint: WebhookEndpoint
    private let feed: any WebhookFeed
    private let transport: any WebhookTransport
    private let stateFile: WebhookStateFile
    private let logger: Logger
    private let tuning: Tuning

    /// How the engine paces itself; the defaults are the documented ones, tests shorten them.
    public struct Tuning: Sendable {
        /// The most messages read ahead of the cursor.
        public var maximumQueued = 10_000
        /// The changes one read of the feed asks for.
        public var pageSize = 500
        /// How long a read of the feed waits for a change once caught up (milliseconds).
        public var feedWait = 10_000
        /// The first retry's longest wait; it doubles up to `maximumBackoff`.
        public var initialBackoff: Duration = .seconds(5)
        public var maximumBackoff: Duration = .seconds(3600)
        /// The longest `Retry-After` honoured: a receiver asking for days would otherwise stop the endpoint
        /// without it ever being set aside or counted.
        public var longestRetryAfter: Duration = .seconds(3600)
        /// How often progress is written down at most.
        public var persistInterval: Duration = .milliseconds(200)
        /// The wait after a failed read of the feed (the server down or starting), doubling up to 10 s.
        public var feedRetry: Duration = .milliseconds(200)

        public init() {}
    }

    private var state: WebhookEndpointState
    /// Where a new endpoint (no state file yet) starts; `nil` once it has a state.
    private var newEndpointStart: WebhookStart?
    /// The feed is read after this change.
    private var readPosition: UInt64
    /// In the feed's order.
    private var queue = WebhookQueue()
    private var inFlight = 0
    private var throttledUntil: ContinuousClock.Instant?
    private var lastDelivery: Date?
    private var catalog: [String: Set<String>] = [:]
    private var counters = WebhookCounters()
    private var newestSeen: UInt64 = 0
    private var persistScheduled = false
    private var wake: CheckedContinuation<Void, Never>?
    /// The timer that runs `dispatch` when the earliest waiting try (or the throttle's end) is due, and when.
    private var dispatchTimer: (task: Task<Void, Never>, due: ContinuousClock.Instant)?
    private var running: Task<Void, Never>?

    /// - Parameter state: what the state file kept; `nil` for a new endpoint, which starts as `start` says
    ///   once the feed can be read (by default after its newest change: an endpoint gets the changes made
    ///   after it was added, as a new Stripe endpoint gets the events after it).
    public init(
        endpoint: WebhookEndpoint, feed: any WebhookFeed, transport: any WebhookTransport, stateFile: WebhookStateFile,
        state: WebhookEndpointState?, start: WebhookStart = .newest, logger: Logger, tuning: Tuning = Tuning()
    ) {
        self.endpoint = endpoint
        self.feed = feed
        self.transport = transport
        self.stateFile = stateFile
        self.state = state ?? WebhookEndpointState(cursor: 0)
        self.newEndpointStart = state == nil ? start : nil
        self.readPosition = state?.cursor ?? 0
        self.logger = logger
        self.tuning = tuning
    }

    // MARK: Running

    /// Starts reading and delivering; returns at once.
    public func start() {
        guard running == nil else { return }
        running = Task { await self.run() }
    }

    /// Stops, and writes the progress down.
    public func stop() async {
        dispatchTimer?.task.cancel()
        dispatchTimer = nil
        running?.cancel()
        wakeUp()
        await running?.value
        running = nil
        persistNow()
    }

    private func run() async {
        var feedFailures = 0
        // A new endpoint's start is read from the feed first, however long `entitled` takes to answer.
        while let start = newEndpointStart, !Task.isCancelled {
            do throws(EntitledClientError) {
                let cursor = try await feed.initialCursor(start)
                state.cursor = cursor
                readPosition = cursor
                newEndpointStart = nil
                persistNow()
                logger.info("a new webhook endpoint starts after change \(cursor)", metadata: ["endpoint": "\(endpoint.name)", "start": "\(start.rawValue)"])
            } catch {
                feedFailures += 1
                if feedFailures == 1 { logger.warning("cannot read the change feed", metadata: ["endpoint": "\(endpoint.name)", "error": "\(error.message)"]) }
                await sleepUntilWoken(orAt: .now + min(.seconds(10), tuning.feedRetry * (1 << min(feedFailures - 1, 10))))
            }
        }
        feedFailures = 0
        // A filter by entitlement needs the catalog before the first change is judged: with none, every
        // membership change would be passed over, and the cursor moved past it.
        while endpoint.filter.entitlements != nil, !Task.isCancelled {
            do throws(EntitledClientError) {
                catalog = try await feed.catalog()
                break
            } catch {
                feedFailures += 1
                if feedFailures == 1 { logger.warning("cannot read the catalog", metadata: ["endpoint": "\(endpoint.name)", "error": "\(error.message)"]) }
                await sleepUntilWoken(orAt: .now + min(.seconds(10), tuning.feedRetry * (1 << min(feedFailures - 1, 10))))
            }
        }
        feedFailures = 0
        while !Task.isCancelled {
            if state.setAside != nil {
                await watchNewest()
                continue
            }
            if queue.count >= tuning.maximumQueued {
                await sleepUntilWoken(orAt: nil)
                continue
            }
            let caughtUp = readPosition >= newestSeen
            let page: FeedPageInfo
            do throws(EntitledClientError) {
                // Caught up, the read waits for the next change, whatever waits to be sent: a message's next
                // try is the dispatch timer's (`scheduleDispatch`), so the reader never spins on the feed.
                page = try await feed.page(after: readPosition, limit: tuning.pageSize, wait: caughtUp ? tuning.feedWait : 0)
                feedFailures = 0
            } catch {
                if case .server(let failure) = error, failure.code == .truncated {
                    setAside("the change feed no longer holds the changes after \(readPosition) (\(failure.message))")
                    continue
                }
                feedFailures += 1
                if feedFailures == 1 || feedFailures % 50 == 0 {
                    logger.warning("cannot read the change feed", metadata: ["endpoint": "\(endpoint.name)", "error": "\(error.message)"])
                }
                let pause = min(.seconds(10), tuning.feedRetry * (1 << min(feedFailures - 1, 10)))
                await sleepUntilWoken(orAt: .now + pause)
                continue
            }
            take(page)
            dispatch()
            await sleepBriefly()
        }
    }

    /// While the endpoint is set aside: reads only how far the feed has got (one item, waiting for a
    /// change), so that its lag counts the changes kept for it.
    private func watchNewest() async {
        if let page = try? await feed.page(after: readPosition, limit: 1, wait: tuning.feedWait) {
            newestSeen = max(newestSeen, page.newest)
        }
        if state.setAside != nil { await sleepUntilWoken(orAt: .now + .milliseconds(Int64(tuning.feedWait))) }
    }

    /// Queues the messages of `page` that pass the filter, and moves the read position past it.
    private func take(_ page: FeedPageInfo) {
        newestSeen = max(newestSeen, page.newest)
        for change in page.changes {
            if change.entry.action == "define" || change.entry.action == "undefine", let entitlement = change.entry.entitlement {
                if change.entry.action == "define" { catalog[entitlement] = Set(change.entry.products ?? []) } else { catalog[entitlement] = nil }
            }
            guard endpoint.filter.passes(action: change.entry.action, product: change.entry.membership?.productId, catalog: catalog) else {
                continue
            }
            queue.append(WebhookMessage(change))
        }
        readPosition = max(readPosition, page.next)
        moveCursor()
    }

    /// Lets the dispatcher's sends run before the next read, so that reading never starves delivering.
    private func sleepBriefly() async {
        if !queue.isEmpty, inFlight > 0 || queue.count >= tuning.pageSize { await sleepUntilWoken(orAt: .now + .milliseconds(50)) }
    }

    // MARK: Dispatching

    /// Starts every message that may go now: not in flight, its wait over, no earlier message of its
    /// subject undelivered, no change of the catalog or erasure (which go alone) in the way, and the
    /// endpoint neither set aside nor throttled.
    private func dispatch() {
        guard state.setAside == nil else { return }
        let now = ContinuousClock.now
        if let throttledUntil, now < throttledUntil { return scheduleDispatch(at: throttledUntil) }
        // The earliest try passed over for its wait: when to look again, if nothing else calls first.
        var nextDue: ContinuousClock.Instant?
        defer { if let nextDue { scheduleDispatch(at: nextDue) } }
        var keysAhead = Set<String>()
        var position = queue.nextWaiting(from: nil)
        var isFirst = true
        while let index = position, inFlight < endpoint.concurrency {
            position = queue.nextWaiting(from: index + 1)
            let queued = queue[index]
            defer { isFirst = false }
            let keys = queued.message.orderingKeys
            guard !keys.isEmpty else {
                // A barrier: it goes once everything before it is delivered, and nothing after it goes first.
                if isFirst, inFlight == 0, !queued.inFlight {
                    if let notBefore = queued.notBefore, now < notBefore { nextDue = notBefore } else { send(at: index) }
                }
                return
            }
            // Waits behind any earlier message of its membership, its user or its device; and holds back
            // the later ones of each.
            let blocked = keys.contains { keysAhead.contains($0) }
            keysAhead.formUnion(keys)
            guard !blocked, !queued.inFlight else { continue }
            if let notBefore = queued.notBefore, now < notBefore {
                nextDue = min(nextDue ?? notBefore, notBefore)
                continue
            }
            send(at: index)
        }
    }

    /// Has `dispatch` run at `due`, unless a timer already runs it sooner.
    private func scheduleDispatch(at due: ContinuousClock.Instant) {
        if let dispatchTimer, dispatchTimer.due <= due { return }
        dispatchTimer?.task.cancel()
        let task = Task {
            try? await Task.sleep(until: due)
            guard !Task.isCancelled else { return }
            self.dispatchTimerFired()
        }
        dispatchTimer = (task, due)
    }

    private func dispatchTimerFired() {
        dispatchTimer = nil
        dispatch()
    }

    private func send(at index: Int) {
        queue[index].inFlight = true
        queue[index].attempts += 1
        if queue[index].firstTriedAt == nil { queue[index].firstTriedAt = Date() }
        inFlight += 1
        let message = queue[index].message
        let serial = queue[index].serial
        let endpoint = self.endpoint
        let transport = self.transport
        Task {
            let attempt = await transport.send(message, to: endpoint, at: Date())
            self.finished(serial, with: attempt)
        }
    }

    private func finished(_ serial: UInt64, with attempt: WebhookAttempt) {
        inFlight -= 1
        defer {
            dispatch()
            wakeUp()
        }
        guard let index = queue.position(of: serial) else { return }
        queue[index].inFlight = false
        queue[index].lastResult = attempt.summary
        let now = Date()
        switch attempt {
        case .delivered:
            counters.delivered += 1
            lastDelivery = now
            queue.finish(at: index)
            moveCursor()
        case .gone:
            counters.failed += 1
            setAside("the endpoint answered 410 Gone: it asks to be sent nothing more")
        case .throttled(_, let retryAfter):
            counters.retried += 1
            let wait = retryAfter.map { min($0, tuning.longestRetryAfter) } ?? backoff(attempts: queue[index].attempts)
            throttledUntil = .now + wait
            queue[index].notBefore = .now + wait
            giveUpIfDue(at: index, now: now)
        case .failed:
            counters.retried += 1
            queue[index].notBefore = .now + backoff(attempts: queue[index].attempts)
            giveUpIfDue(at: index, now: now)
        }
    }

    /// After the retry period: a message the endpoint cannot take while it takes others is given up
    /// (kept in `failed`, for an admin to redeliver); an endpoint that took nothing all that time is set
    /// aside, its messages kept for when an admin resumes it.
    private func giveUpIfDue(at index: Int, now: Date) {
        guard let first = queue[index].firstTriedAt, now.timeIntervalSince(first) >= endpoint.retryPeriod.seconds else { return }
        if let lastDelivery, lastDelivery > first {
            let queued = queue[index]
            queue.finish(at: index)
            counters.failed += 1
            state.failed.append(
                WebhookEndpointState.FailedMessage(
                    id: queued.message.id, type: queued.message.type, sequence: queued.message.sequence, attempts: queued.attempts,
                    lastResult: queued.lastResult, firstTriedAt: Self.rfc3339(first), gaveUpAt: Self.rfc3339(now)
                )
            )
            if state.failed.count > WebhookEndpointState.maximumFailed { state.failed.removeFirst(state.failed.count - WebhookEndpointState.maximumFailed) }
            logger.error(
                "gave up a webhook message after its retry period", metadata: ["endpoint": "\(endpoint.name)", "id": "\(queued.message.id)", "last": "\(queued.lastResult)"]
            )
            moveCursor()
        } else {
            setAside("no message was delivered for \(Int(endpoint.retryPeriod.seconds / 3600)) hours (the last try: \(queue[index].lastResult))")
        }
    }

    /// The wait before the next try after `attempts` tries: exponential, capped, with jitter (half fixed,
    /// half random), so that many endpoints failing together do not come back together.
    private func backoff(attempts: Int) -> Duration {
        let cap = min(tuning.maximumBackoff, tuning.initialBackoff * (1 << min(max(attempts - 1, 0), 20)))
        let nanoseconds = cap.nanosecondsRounded
        return .nanoseconds(nanoseconds / 2 + Int64.random(in: 0...max(nanoseconds / 2, 0)))
    }

    private func setAside(_ reason: String) {
        guard state.setAside == nil else { return }
        state.setAside = WebhookEndpointState.SetAside(reason: reason, since: Self.rfc3339(Date()))
        logger.error("set a webhook endpoint aside", metadata: ["endpoint": "\(endpoint.name)", "reason": "\(reason)"])
        persistNow()
    }

    // MARK: Progress

    /// The cursor: just before the oldest message not delivered, else the read position.
    private func moveCursor() {
        let cursor = queue.first.map { $0.message.sequence - 1 } ?? readPosition
        guard cursor > state.cursor else { return }
        state.cursor = cursor
        schedulePersist()
    }

    private func schedulePersist() {
        guard !persistScheduled else { return }
        persistScheduled = true
        let interval = tuning.persistInterval
        Task {
            try? await Task.sleep(for: interval)
            self.persistNow()
        }
    }

    private func persistNow() {
        persistScheduled = false
        guard newEndpointStart == nil else { return }  // nothing to keep before the endpoint knows where it starts
        do {
            try stateFile.write(state)
        } catch {
            logger.error("cannot write a webhook endpoint's state", metadata: ["endpoint": "\(endpoint.name)", "error": "\(error)"])
        }
    }

    // MARK: Waiting

    private func sleepUntilWoken(orAt deadline: ContinuousClock.Instant?) async {
        let timer = deadline.map { deadline in
            Task {
                try? await Task.sleep(until: deadline)
                self.wakeUp()
            }
        }
        await withCheckedContinuation { continuation in
            if Task.isCancelled {
                continuation.resume()
            } else {
                wake = continuation
            }
        }
        timer?.cancel()
    }

    private func wakeUp() {
        wake?.resume()
        wake = nil
    }

    // MARK: Admin

    /// What `entitlectl webhooks` and the metrics show of the endpoint now.
    public func status() -> WebhookEndpointStatus {
        WebhookEndpointStatus(
            name: endpoint.name, url: endpoint.url, cursor: state.cursor, newest: newestSeen, queued: queue.count, inFlight: inFlight,
            setAside: state.setAside, failed: state.failed, counters: counters
        )
    }

    /// Puts a set-aside endpoint back to work: its queued messages are tried at once, each with a new
    /// retry period.
    public func resume() {
        guard state.setAside != nil else { return }
        state.setAside = nil
        throttledUntil = nil
        for index in queue.positions {
            queue[index].notBefore = nil
            queue[index].firstTriedAt = nil
        }
        persistNow()
        logger.notice("resumed a webhook endpoint", metadata: ["endpoint": "\(endpoint.name)"])
        dispatch()
        wakeUp()
    }

    /// Sends a given-up message again, now, read again from the change feed; it leaves `failed` once
    /// delivered.
    /// - Throws: `WebhookAdminError` when no given-up message has this id, or the feed no longer holds it.
    public func redeliver(_ id: String) async throws(WebhookAdminError) -> WebhookAttempt {
        guard let failed = state.failed.first(where: { $0.id == id }) else {
            throw WebhookAdminError("endpoint \(endpoint.name) has given up no message \(id)")
        }
        let page: FeedPageInfo
        do {
            page = try await feed.page(after: failed.sequence - 1, limit: 1000, wait: 0)
        } catch {
            throw WebhookAdminError("cannot read change \(failed.sequence) from the feed: \(error.message)")
        }
        guard let change = page.changes.first(where: { WebhookMessage($0).id == id }) else {
            throw WebhookAdminError("the change feed no longer holds change \(failed.sequence) (its retention let it go, or it was erased)")
        }
        let attempt = await transport.send(WebhookMessage(change), to: endpoint, at: Date())
        if case .delivered = attempt {
            state.failed.removeAll { $0.id == id }
            counters.delivered += 1
            persistNow()
        }
        return attempt
    }

    static func rfc3339(_ date: Date) -> String {
        ProtocolTime.string(milliseconds: Int64((date.timeIntervalSince1970 * 1000).rounded(.down)))
    }
}

extension Duration {
    /// The duration in seconds, as a `Double`.
    var seconds: Double { Double(components.seconds) + Double(components.attoseconds) / 1e18 }
}
