import CLibEdit
import EntitledConsole

#if canImport(Glibc)
import Glibc
#endif

/// The interactive line editor: libedit with Emacs keys, a history file, Tab completion, an argument
/// hint in the right prompt, Ctrl-R history search and Ctrl-C clearing the line.
///
/// libedit calls back through C function pointers that cannot capture Swift state; they find this object
/// again through the editor's client data (`EL_CLIENTDATA`).
final class LineEditor {
    /// What reading a line gave.
    enum Input {
        case line(String)
        /// End of input: Ctrl-D on an empty line, or the terminal went away.
        case endOfInput
    }

    private let editLine: OpaquePointer
    private let history: OpaquePointer
    private let historyPath: String?
    private let complete: (String) -> Completion
    private let hint: (String) -> String?
    /// C strings handed to libedit by the prompt callbacks; they must outlive the call that returns them.
    private var promptText: UnsafeMutablePointer<CChar>
    private var rightPromptText: UnsafeMutablePointer<CChar>
    /// The prompt as shown, for finding the row of the cursor when something is printed above the line.
    private var promptString = "> "
    /// Polled with the terminal while a line is read: a byte there means `interruption` has something
    /// to print above the line (a pushed change). -1 until `printAboveLineOnWake` is called.
    private var wakeDescriptor: Int32 = -1
    private var interruption: (() -> [String])?

    /// - Parameters:
    ///   - historyPath: the history file, loaded now and saved after each remembered line; `nil` keeps
    ///     history for this session only.
    ///   - complete: the completion of the text before the cursor.
    ///   - hint: the argument synopsis for the line typed so far.
    init(
        programName: String, historyPath: String?, complete: @escaping (String) -> Completion,
        hint: @escaping (String) -> String?
    ) {
        editLine = el_init(programName, entitled_standard_input(), entitled_standard_output(), entitled_standard_error())
        history = history_init()
        self.historyPath = historyPath
        self.complete = complete
        self.hint = hint
        promptText = strdup("> ")
        rightPromptText = strdup("")

        entitled_history_set_size(history, 1000)
        entitled_history_set_unique(history, 1)
        if let historyPath { entitled_history_load(history, historyPath) }

        entitled_el_set_editor(editLine, "emacs")
        entitled_el_set_history(editLine, history)
        entitled_el_set_client_data(editLine, Unmanaged.passUnretained(self).toOpaque())
        entitled_el_set_edit_mode_without_signal_keys(editLine)
        entitled_el_set_prompt(editLine) { editLine in LineEditor.owner(of: editLine)?.promptText }
        entitled_el_set_right_prompt(editLine) { editLine in LineEditor.owner(of: editLine)?.rightPrompt() }

        entitled_el_add_function(editLine, "entitlectl-complete", "Complete the word before the cursor") { editLine, _ in
            LineEditor.owner(of: editLine)?.completeWord() ?? UInt8(CC_ERROR)
        }
        entitled_el_add_function(editLine, "entitlectl-cancel", "Discard the line being typed") { editLine, _ in
            LineEditor.owner(of: editLine)?.cancelLine() ?? UInt8(CC_ERROR)
        }
        entitled_el_add_function(editLine, "entitlectl-space", "Insert a space and show the argument hint") { editLine, _ in
            guard let editLine else { return UInt8(CC_ERROR) }
            el_insertstr(editLine, " ")
            // A full refresh redraws the right prompt, which shows the hint of the command just typed.
            return UInt8(CC_REFRESH)
        }
        entitled_el_bind(editLine, "^I", "entitlectl-complete")
        entitled_el_bind(editLine, "^C", "entitlectl-cancel")
        entitled_el_bind(editLine, " ", "entitlectl-space")
        entitled_el_bind(editLine, "^R", "em-inc-search-prev")
    }

    deinit {
        el_end(editLine)
        history_end(history)
        free(promptText)
        free(rightPromptText)
    }

    /// Reads one line with `prompt`; the line comes without its newline.
    func readLine(prompt: String) -> Input {
        free(promptText)
        promptText = strdup(prompt)
        promptString = prompt
        // Editing mode before the prompt appears: a key typed the moment the prompt shows (Ctrl-D, Tab)
        // must reach libedit, not the terminal's cooked mode.
        entitled_el_prepare_terminal(editLine)
        var count: Int32 = 0
        guard let text = el_gets(editLine, &count), count > 0 else { return .endOfInput }
        var line = String(cString: text)
        if line.hasSuffix("\n") { line.removeLast() }
        return .line(line)
    }

    /// While a line is read, each time `descriptor` (the read end of a non-blocking pipe) becomes
    /// readable its bytes are drained and `take` is asked for lines to show; when it has some, the line
    /// being typed is cleared, they are printed, and the prompt and the typed text are drawn again below
    /// them, cursor included: what is typed is never lost or mixed into the printed lines.
    ///
    /// libedit's `el_gets` waits in its own read of the terminal; this replaces that read (`EL_GETCFN`)
    /// with one that polls the terminal and `descriptor` together.
    func printAboveLine(onWake descriptor: Int32, take: @escaping () -> [String]) {
        wakeDescriptor = descriptor
        interruption = take
        entitled_el_set_read_function(editLine) { editLine, character in
            LineEditor.owner(of: editLine)?.readCharacter(into: character) ?? -1
        }
    }

    /// libedit's read of one character: 1 with a character, 0 at the end of input, -1 on an error.
    private func readCharacter(into character: UnsafeMutablePointer<wchar_t>?) -> Int32 {
        guard let character else { return -1 }
        while true {
            var entries = [
                pollfd(fd: STDIN_FILENO, events: Int16(POLLIN), revents: 0),
                pollfd(fd: wakeDescriptor, events: Int16(POLLIN), revents: 0),
            ]
            if poll(&entries, 2, -1) < 0 {
                if errno == EINTR { continue }
                return -1
            }
            if entries[1].revents != 0 {
                drainWakeDescriptor()
                printAboveLine()
            }
            if entries[0].revents != 0 { return readTerminalCharacter(into: character) }
        }
    }

    /// Reads one character from the terminal (a key, or a byte of an escape sequence), decoded in the
    /// locale's encoding as libedit's own read does: a byte that starts no character is dropped.
    private func readTerminalCharacter(into character: UnsafeMutablePointer<wchar_t>) -> Int32 {
        var bytes: [CChar] = []
        while true {
            guard let byte = readTerminalByte() else { return 0 }
            bytes.append(CChar(bitPattern: byte))
            var state = mbstate_t()
            var wide: wchar_t = 0
            switch bytes.withUnsafeBufferPointer({ mbrtowc(&wide, $0.baseAddress, $0.count, &state) }) {
            case -2: continue  // the character goes on in the next byte
            case -1: bytes = []  // not a character in this encoding
            default:
                character.pointee = wide
                return 1
            }
        }
    }

    private func readTerminalByte() -> UInt8? {
        var byte: UInt8 = 0
        while true {
            let count = read(STDIN_FILENO, &byte, 1)
            if count == 1 { return byte }
            if count < 0 && errno == EINTR { continue }
            return nil
        }
    }

    private func drainWakeDescriptor() {
        var bytes = [UInt8](repeating: 0, count: 64)
        while bytes.withUnsafeMutableBytes({ read(wakeDescriptor, $0.baseAddress, $0.count) }) > 0 {}
    }

    /// Clears the prompt and the typed text (from the prompt's first row down), prints what
    /// `interruption` has, and draws the prompt and the text again on the row after it.
    private func printAboveLine() {
        guard let lines = interruption?(), !lines.isEmpty else { return }
        let rows = (promptString.count + textBeforeCursor().count) / terminalWidth()
        StandardStreams.output("\r" + (rows > 0 ? "\u{1B}[\(rows)A" : "") + "\u{1B}[J" + lines.joined(separator: "\n") + "\n")
        entitled_el_refresh(editLine)
    }

    /// Adds `line` to the history and saves the history file.
    func remember(_ line: String) {
        entitled_history_enter(history, line)
        save()
    }

    /// Takes every line for which `isForgotten` holds out of the history, in memory (the up arrow and
    /// Ctrl-R no longer find it) and in the history file, which is written again without it.
    func forget(where isForgotten: (String) -> Bool) {
        var lines: [String] = []
        var entry = entitled_history_oldest(history)
        while let text = entry {
            lines.append(String(cString: text))
            entry = entitled_history_newer(history)
        }
        let kept = lines.filter { !isForgotten($0) }
        guard kept.count < lines.count else { return }
        // Cleared and entered again oldest first, the kept lines keep their order (and the walk above
        // needs no care for entries deleted under its cursor).
        entitled_history_clear(history)
        for line in kept { entitled_history_enter(history, line) }
        save()
    }

    /// Writes the history file (all of it: libedit has no append), when there is one.
    private func save() {
        guard let historyPath else { return }
        entitled_history_save(history, historyPath)
        // Ids and names of customers are in there: keep the file to its owner.
        chmod(historyPath, 0o600)
    }

    private static func owner(of editLine: OpaquePointer?) -> LineEditor? {
        guard let editLine, let data = entitled_el_get_client_data(editLine) else { return nil }
        return Unmanaged<LineEditor>.fromOpaque(data).takeUnretainedValue()
    }

    /// The text of the line before the cursor.
    private func textBeforeCursor() -> String {
        guard let info = el_line(editLine) else { return "" }
        let length = info.pointee.cursor - info.pointee.buffer
        return info.pointee.buffer.withMemoryRebound(to: UInt8.self, capacity: length) {
            String(decoding: UnsafeBufferPointer(start: $0, count: length), as: UTF8.self)
        }
    }

    private func wholeLine() -> String {
        guard let info = el_line(editLine) else { return "" }
        let length = info.pointee.lastchar - info.pointee.buffer
        return info.pointee.buffer.withMemoryRebound(to: UInt8.self, capacity: length) {
            String(decoding: UnsafeBufferPointer(start: $0, count: length), as: UTF8.self)
        }
    }

    private func rightPrompt() -> UnsafeMutablePointer<CChar> {
        free(rightPromptText)
        rightPromptText = strdup(hint(wholeLine()) ?? "")
        return rightPromptText
    }

    private func completeWord() -> UInt8 {
        switch complete(textBeforeCursor()).action {
        case .none:
            return UInt8(CC_ERROR)
        case .replace(let deleting, let insert):
            el_deletestr(editLine, Int32(deleting))
            el_insertstr(editLine, insert)
            return UInt8(CC_REFRESH)
        case .list(let candidates):
            StandardStreams.output("\n" + Self.columns(candidates, width: terminalWidth()) + "\n")
            return UInt8(CC_REDISPLAY)
        }
    }

    private func cancelLine() -> UInt8 {
        guard let info = el_line(editLine) else { return UInt8(CC_ERROR) }
        el_cursor(editLine, Int32(info.pointee.lastchar - info.pointee.cursor))
        el_deletestr(editLine, Int32(wholeLine().unicodeScalars.count))
        StandardStreams.output("^C\n")
        return UInt8(CC_REDISPLAY)
    }

    private func terminalWidth() -> Int {
        var size = winsize()
        guard ioctl(STDOUT_FILENO, UInt(TIOCGWINSZ), &size) == 0, size.ws_col > 0 else { return 80 }
        return Int(size.ws_col)
    }

    /// Candidates laid out in columns, as shells list completions.
    static func columns(_ words: [String], width: Int) -> String {
        let cell = (words.map(\.count).max() ?? 0) + 2
        let perLine = max(1, width / cell)
        var lines: [String] = []
        for start in stride(from: 0, to: words.count, by: perLine) {
            let row = words[start..<min(start + perLine, words.count)]
            lines.append(row.map { $0 + String(repeating: " ", count: cell - $0.count) }.joined().trimmingTrailingSpaces())
        }
        return lines.joined(separator: "\n")
    }
}

extension String {
    func trimmingTrailingSpaces() -> String {
        var text = self
        while text.last == " " { text.removeLast() }
        return text
    }
}
