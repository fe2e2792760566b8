/// What a console command that removes or takes back data (`revoke`, `undefine`, `erase`) does before it
/// sends anything.
public enum ConfirmationPolicy {
    /// Show what it will touch, then ask: the function shows the question (`revoke mem_x? [y/N] `) and
    /// returns whether the answer was yes. The interactive console asks this way.
    case ask((String) -> Bool)
    /// Go ahead without asking: `--yes` was given.
    case assumeYes
    /// Refuse, sending nothing: nobody can be asked (a script, a one-shot command) and `--yes` was not
    /// given.
    case refuse
}
