// Fixed-signature wrappers around libedit's variadic functions (el_set, el_get, history), which Swift
// cannot call directly. One wrapper per use, named after the operation it performs.
#ifndef ENTITLED_CLIBEDIT_SHIM_H
#define ENTITLED_CLIBEDIT_SHIM_H

#include <stdio.h>
#include <histedit.h>

// The C standard streams as functions: Swift 6 refuses the global variables `stdin`, `stdout` and
// `stderr` as shared mutable state.
static inline FILE *entitled_standard_input(void) { return stdin; }
static inline FILE *entitled_standard_output(void) { return stdout; }
static inline FILE *entitled_standard_error(void) { return stderr; }

typedef char *(*entitled_prompt_function)(EditLine *);
typedef unsigned char (*entitled_editor_function)(EditLine *, int);

static inline int entitled_el_set_prompt(EditLine *el, entitled_prompt_function prompt) {
    return el_set(el, EL_PROMPT, prompt);
}

static inline int entitled_el_set_right_prompt(EditLine *el, entitled_prompt_function prompt) {
    return el_set(el, EL_RPROMPT, prompt);
}

static inline int entitled_el_set_editor(EditLine *el, const char *mode) {
    return el_set(el, EL_EDITOR, mode);
}

static inline int entitled_el_set_signal_handling(EditLine *el, int on) {
    return el_set(el, EL_SIGNAL, on);
}

static inline int entitled_el_set_history(EditLine *el, History *h) {
    return el_set(el, EL_HIST, history, h);
}

static inline int entitled_el_set_client_data(EditLine *el, void *data) {
    return el_set(el, EL_CLIENTDATA, data);
}

static inline void *entitled_el_get_client_data(EditLine *el) {
    void *data = NULL;
    el_get(el, EL_CLIENTDATA, &data);
    return data;
}

/// Adds a named editor function, which a key can then be bound to.
static inline int entitled_el_add_function(EditLine *el, const char *name, const char *help, entitled_editor_function function) {
    return el_set(el, EL_ADDFN, name, help, function);
}

/// Binds a key sequence (such as "^I" or "^R") to a named editor function.
static inline int entitled_el_bind(EditLine *el, const char *key, const char *function) {
    return el_set(el, EL_BIND, key, function, NULL);
}

/// Turns off the terminal's signal keys while a line is edited, so Ctrl-C reaches the editor as a key
/// (bound to clearing the line) instead of killing the process. Outside editing they work as usual.
static inline int entitled_el_set_edit_mode_without_signal_keys(EditLine *el) {
    return el_set(el, EL_SETTY, "-d", "-isig", NULL);
}

/// Puts the terminal in editing mode now (libedit would do it at the first key read, after drawing the
/// prompt, and keys typed in between would be taken by the terminal's cooked mode).
static inline int entitled_el_prepare_terminal(EditLine *el) {
    return el_set(el, EL_PREP_TERM, 1);
}

typedef int (*entitled_read_function)(EditLine *, wchar_t *);

/// Replaces libedit's reading of a character with `function` (which returns 1 with a character, 0 at end
/// of input, -1 on error): the console's reads also watch for pushed lines to show while a line is typed.
static inline int entitled_el_set_read_function(EditLine *el, entitled_read_function function) {
    return el_set(el, EL_GETCFN, function);
}

/// Redraws the prompt and the line being edited from the cursor's row, as if the screen were blank
/// there: after text was printed above the line.
static inline int entitled_el_refresh(EditLine *el) {
    return el_set(el, EL_REFRESH);
}

static inline int entitled_history_set_size(History *h, int size) {
    HistEvent event;
    return history(h, &event, H_SETSIZE, size);
}

static inline int entitled_history_set_unique(History *h, int unique) {
    HistEvent event;
    return history(h, &event, H_SETUNIQUE, unique);
}

static inline int entitled_history_enter(History *h, const char *line) {
    HistEvent event;
    return history(h, &event, H_ENTER, line);
}

static inline int entitled_history_load(History *h, const char *path) {
    HistEvent event;
    return history(h, &event, H_LOAD, path);
}

static inline int entitled_history_save(History *h, const char *path) {
    HistEvent event;
    return history(h, &event, H_SAVE, path);
}

/// The oldest line of the history (and the history's cursor moves to it), or NULL when it is empty.
static inline const char *entitled_history_oldest(History *h) {
    HistEvent event;
    return history(h, &event, H_LAST) == 0 ? event.str : NULL;
}

/// The line after the cursor's, one newer (and the cursor moves to it), or NULL after the newest.
static inline const char *entitled_history_newer(History *h) {
    HistEvent event;
    return history(h, &event, H_PREV) == 0 ? event.str : NULL;
}

static inline int entitled_history_clear(History *h) {
    HistEvent event;
    return history(h, &event, H_CLEAR);
}

#endif
