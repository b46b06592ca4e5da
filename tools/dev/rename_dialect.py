#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""One naming dialect per floor (issue 20), as a rename that can be run again.

    tools/dev/rename_dialect.py [--dry-run | --check] [REPO_ROOT]

plugins/common exports sl_<object>_<verb> (and SL_ macros, struct sl_...);
core/src/<floor>/<module>.c exports <module>_<verb> (see tests/e2e/dialect.py,
which keeps it so).  The tables below say old -> new for every name that
broke it.  Each run renames what is still spelled the old way and leaves the
rest alone, so it can be run on a tree that merged other branches since:

  * identifiers (functions, data, macros, enum constants): whole C tokens in
    every tracked .c/.h/.cc file, outside string and character literals
    (a log message or an option name never changes) and never as a member
    after `.` or `->`; in the docs (*.md, man pages *.in, .py/.sh/.supp/
    CMake files) only a mention as code, `old(` or `old` in backquotes, and
    upper-case macros (a bare word may be an option's name: `line_header`);
  * struct/enum tags: `struct old` / `enum old`, in code and docs alike.

Before writing anything it checks that no new name is already in use (a
collision), and it refuses to run if one is.  --dry-run prints what it would
change; --check exits 1 if anything is left to rename.  The public plugin
ABI (core/include/sluice/) is sl_* already and is not touched.
"""
import os
import re
import subprocess
import sys

# old new: functions, data, macros and enum constants.
IDENTS = """
# plugins/common/fmt.{c,h}, text_escape.c: fmt_* appenders
fmt_addr sl_fmt_addr
fmt_addr_in sl_fmt_addr_in
fmt_addr_in_raw sl_fmt_addr_in_raw
fmt_addr_raw sl_fmt_addr_raw
fmt_chr sl_fmt_chr
fmt_commit sl_fmt_commit
fmt_date3164 sl_fmt_date3164
fmt_date3164_raw sl_fmt_date3164_raw
fmt_dec2_tab sl_fmt_dec2_tab
fmt_dec8_fixed sl_fmt_dec8_fixed
fmt_dec8_var sl_fmt_dec8_var
fmt_digits8 sl_fmt_digits8
fmt_end sl_fmt_end
fmt_escaped sl_fmt_escaped
fmt_hex sl_fmt_hex
fmt_hex_raw sl_fmt_hex_raw
fmt_hexbytes sl_fmt_hexbytes
fmt_i64 sl_fmt_i64
fmt_init sl_fmt_init
fmt_ip4 sl_fmt_ip4
fmt_ip4_raw sl_fmt_ip4_raw
fmt_ip6 sl_fmt_ip6
fmt_ip6_full sl_fmt_ip6_full
fmt_ip6_full_raw sl_fmt_ip6_full_raw
fmt_ip6_raw sl_fmt_ip6_raw
fmt_json_body sl_fmt_json_body
fmt_json_str sl_fmt_json_str
fmt_lit sl_fmt_lit
fmt_mac sl_fmt_mac
fmt_mac_raw sl_fmt_mac_raw
fmt_mem sl_fmt_mem
fmt_nul sl_fmt_nul
fmt_rec_v6 sl_fmt_rec_v6
fmt_rfc3339 sl_fmt_rfc3339
fmt_rfc3339_raw sl_fmt_rfc3339_raw
fmt_room sl_fmt_room
fmt_str sl_fmt_str
fmt_time_cache_init sl_fmt_time_cache_init
fmt_u64 sl_fmt_u64
fmt_u64_inline sl_fmt_u64_inline
fmt_u64_raw sl_fmt_u64_raw
fmt_u64_slow sl_fmt_u64_slow
# plugins/common/line_header.{c,h}
line_header_check_host sl_line_header_check_host
line_header_check_tag sl_line_header_check_tag
line_header_init sl_line_header_init
line_header_write sl_line_header_write
# plugins/common/nffile.{c,h}, nffile_recover.{c,h}
nf_block_write sl_nf_block_write
nf_encode_v3 sl_nf_encode_v3
nf_pwrite_all sl_nf_pwrite_all
nf_read_block sl_nf_read_block
nf_read_info sl_nf_read_info
nf_stat_add sl_nf_stat_add
nf_stat_merge sl_nf_stat_merge
nf_writer_abandon sl_nf_writer_abandon
nf_writer_absorb sl_nf_writer_absorb
nf_writer_add sl_nf_writer_add
nf_writer_adopt sl_nf_writer_adopt
nf_writer_attach sl_nf_writer_attach
nf_writer_blocks sl_nf_writer_blocks
nf_writer_close sl_nf_writer_close
nf_writer_flush sl_nf_writer_flush
nf_writer_free sl_nf_writer_free
nf_writer_is_open sl_nf_writer_is_open
nf_writer_lost sl_nf_writer_lost
nf_writer_new sl_nf_writer_new
nf_writer_open sl_nf_writer_open
nf_writer_set_created sl_nf_writer_set_created
nf_writer_stat sl_nf_writer_stat
# plugins/common/relp_conn.{c,h}
relp_available sl_relp_available
relp_conn_acked sl_relp_conn_acked
relp_conn_close sl_relp_conn_close
relp_conn_free sl_relp_conn_free
relp_conn_new sl_relp_conn_new
relp_conn_open sl_relp_conn_open
relp_conn_send sl_relp_conn_send
relp_conn_sent sl_relp_conn_sent
# plugins/common/tls_stream.{c,h}
tls_available sl_tls_available
tls_conn_alerted sl_tls_conn_alerted
tls_conn_cert_requested sl_tls_conn_cert_requested
tls_conn_discard_input sl_tls_conn_discard_input
tls_conn_flush sl_tls_conn_flush
tls_conn_free sl_tls_conn_free
tls_conn_handshake sl_tls_conn_handshake
tls_conn_new sl_tls_conn_new
tls_conn_pending sl_tls_conn_pending
tls_conn_verify_failed sl_tls_conn_verify_failed
tls_conn_wire sl_tls_conn_wire
tls_conn_writev sl_tls_conn_writev
tls_creds_free sl_tls_creds_free
tls_creds_new sl_tls_creds_new
tls_priority sl_tls_priority
# plugins/common/expr_lex.{c,h}: the lexer's functions, shared with expr.c
expr_fail sl_expr_fail
expr_found sl_expr_found
expr_is_word sl_expr_is_word
expr_lit_addr sl_expr_lit_addr
expr_lit_mac sl_expr_lit_mac
expr_lit_str sl_expr_lit_str
expr_lit_u64 sl_expr_lit_u64
expr_next sl_expr_next
expr_push sl_expr_push
expr_word sl_expr_word
# plugins/common: macros of fmt.h
FMT_ADDR_MAX SL_FMT_ADDR_MAX
FMT_DATE3164_LEN SL_FMT_DATE3164_LEN
FMT_HEX_MAX SL_FMT_HEX_MAX
FMT_IP4_MAX SL_FMT_IP4_MAX
FMT_IP6_FULL_MAX SL_FMT_IP6_FULL_MAX
FMT_IP6_MAX SL_FMT_IP6_MAX
FMT_MAC_MAX SL_FMT_MAC_MAX
FMT_RFC3339_MAX SL_FMT_RFC3339_MAX
FMT_U64_INLINE SL_FMT_U64_INLINE
FMT_U64_MAX SL_FMT_U64_MAX
# plugins/common: macros and enum constants of line_header.h
LH_HOST_MAX SL_LH_HOST_MAX
LH_MAX SL_LH_MAX
LH_NONE SL_LH_NONE
LH_RFC3339 SL_LH_RFC3339
LH_SYSLOG SL_LH_SYSLOG
LH_TAG_MAX SL_LH_TAG_MAX
# plugins/common: macros and enum constants of nffile.h
NF_BLOCK_HEADER_SIZE SL_NF_BLOCK_HEADER_SIZE
NF_BLOCK_PAYLOAD SL_NF_BLOCK_PAYLOAD
NF_BLOCK_READ_MAX SL_NF_BLOCK_READ_MAX
NF_COMP_LZ4 SL_NF_COMP_LZ4
NF_COMP_NONE SL_NF_COMP_NONE
NF_END_ACTIVE SL_NF_END_ACTIVE
NF_END_END SL_NF_END_END
NF_END_FORCED SL_NF_END_FORCED
NF_END_IDLE SL_NF_END_IDLE
NF_END_RESOURCES SL_NF_END_RESOURCES
NF_HEADER_SIZE SL_NF_HEADER_SIZE
NF_IDENT_MAX SL_NF_IDENT_MAX
NF_V3_MAX SL_NF_V3_MAX
# plugins/common: macros and enum constants of relp_conn.h, tls_stream.h
RELP_WINDOW SL_RELP_WINDOW
TLS_CLOSED SL_TLS_CLOSED
TLS_DONE SL_TLS_DONE
TLS_FAILED SL_TLS_FAILED
TLS_WANT_READ SL_TLS_WANT_READ
TLS_WANT_WRITE SL_TLS_WANT_WRITE
# core/src: functions whose prefix is not their file's name
# core/src/base/yaml_tree.c
ytree_free yaml_tree_free
ytree_is_null yaml_tree_is_null
ytree_kind_name yaml_tree_kind_name
ytree_load_file yaml_tree_load_file
ytree_load_string yaml_tree_load_string
ytree_map_get yaml_tree_map_get
ytree_map_key yaml_tree_map_key
# core/src/cli/ctl_client.c
ctl_is_command ctl_client_is_command
ctl_main ctl_client_main
# core/src/config/core_keys.c
inst_default_thread core_keys_default_thread
inst_key_is_core core_keys_is_core
inst_plugin_flags core_keys_plugin_flags
# core/src/config/opt_groups.c
opt_group_is opt_groups_is
opt_group_not_map opt_groups_not_map
# core/src/config/options.c
opt_check_default options_check_default
opt_check_octal options_check_octal
opt_describe_values options_describe_values
opt_edit_distance options_edit_distance
opt_fill options_fill
opt_find options_find
opt_format_default options_format_default
opt_format_range options_format_range
opt_parse_bool options_parse_bool
opt_parse_duration options_parse_duration
opt_parse_enum options_parse_enum
opt_parse_int options_parse_int
opt_parse_size options_parse_size
opt_shown_type options_shown_type
opt_store_list options_store_list
opt_store_scalar options_store_scalar
opt_suggest options_suggest
opt_type_name options_type_name
opt_values_free options_values_free
# core/src/config/plugin_check.c
plugin_opt_flags_of plugin_check_opt_flags_of
# core/src/config/plugin_loader.c
loader_find plugin_loader_find
loader_free plugin_loader_free
loader_init plugin_loader_init
loader_kind_name plugin_loader_kind_name
loader_load_all plugin_loader_load_all
loader_load_path plugin_loader_load_path
sl_plugin_needs_one_of plugin_loader_needs_one_of
# core/src/convert/convert_ulogd_*.c
cu_comment convert_ulogd_comment
cu_error_at convert_ulogd_error_at
cu_notconv convert_ulogd_notconv
cu_note convert_ulogd_note
cu_yq convert_ulogd_yq
cu_pg_protos convert_ulogd_pg_protos
cu_ent convert_ulogd_ent
cu_find_plug convert_ulogd_find_plug
cu_has convert_ulogd_has
cu_ignored_why convert_ulogd_ignored_why
cu_pg_columns convert_ulogd_pg_columns
cu_word_in convert_ulogd_word_in
cu_unit_paths convert_ulogd_unit_paths
# core/src/convert/subproc.c
spawn_run subproc_run
# core/src/graph/inst_keys.c
inst_copy_mask inst_keys_copy_mask
inst_subtree_reads inst_keys_subtree_reads
# core/src/runtime/event_loop.c
loop_free event_loop_free
loop_modify event_loop_modify
loop_new event_loop_new
loop_now_ms event_loop_now_ms
loop_run event_loop_run
loop_serve event_loop_serve
loop_signals event_loop_signals
loop_stop event_loop_stop
loop_timer_arm event_loop_timer_arm
loop_timer_disarm event_loop_timer_disarm
loop_timer_free event_loop_timer_free
loop_timer_new event_loop_timer_new
loop_timer_service event_loop_timer_service
loop_unwatch event_loop_unwatch
loop_watch event_loop_watch
loop_watch_service event_loop_watch_service
# core/src/runtime/host.c
sluice_host host_table
runtime_free host_free
runtime_init host_init
runtime_inputs_finished host_inputs_finished
runtime_log_counters host_log_counters
runtime_prepare host_prepare
runtime_process host_process
runtime_reopen host_reopen
runtime_run_threads host_run_threads
runtime_shutdown host_shutdown
runtime_start host_start
runtime_stop host_stop
# core/src/runtime/queue.c
batch_new queue_batch_new
bq_abandon queue_abandon
bq_abandoned queue_abandoned
bq_clear_wakeup queue_clear_wakeup
bq_copy_records queue_copy_records
bq_fields_init queue_fields_init
bq_free queue_free
bq_get queue_get
bq_new queue_new
bq_put queue_put
bq_put_ctl queue_put_ctl
bq_release queue_release
bq_set_waiter queue_set_waiter
bq_stats queue_stats
bq_take_queued queue_take_queued
bq_wake queue_wake
# core/src/runtime/worker.c (its static and per-thread functions are worker_*)
workers_abandon worker_abandon
workers_free worker_free
workers_join_finished worker_join_finished
workers_pause worker_pause
workers_plan worker_plan
workers_place worker_place
workers_reap worker_reap
workers_reopen worker_reopen
workers_replan worker_replan
workers_resume worker_resume
workers_shutdown worker_shutdown
workers_start worker_start
workers_stop_report worker_stop_report
"""

# old new: struct/enum tags of plugins/common's public headers.
TAGS = """
# plugins/common: fmt.h, line_header.h, nffile.h, nffile_recover.h, relp_conn.h, tls_stream.h
fmt_buf sl_fmt_buf
fmt_date3164_cache sl_fmt_date3164_cache
fmt_time_cache sl_fmt_time_cache
line_header sl_line_header
line_header_style sl_line_header_style
nf_compression sl_nf_compression
nf_file_info sl_nf_file_info
nf_flow sl_nf_flow
nf_orphan sl_nf_orphan
nf_stat sl_nf_stat
nf_writer sl_nf_writer
relp_conn sl_relp_conn
tls_conf sl_tls_conf
tls_conn sl_tls_conn
tls_creds sl_tls_creds
"""

C_EXT = (".c", ".h", ".cc")
DOC_EXT = (".md", ".in", ".py", ".sh", ".txt", ".cmake", ".supp")
# Never touched: the installed ABI headers, and this table.
SKIP_PREFIXES = ("core/include/sluice/", "tools/dev/rename_dialect.py")


def table(text):
    pairs = []
    for line in text.splitlines():
        line = line.split("#", 1)[0].strip()
        if line:
            old, new = line.split()
            pairs.append((old, new))
    return pairs


def tracked_files(root):
    try:
        out = subprocess.run(["git", "-C", root, "ls-files", "-z"], check=True,
                             capture_output=True).stdout.decode()
        files = [f for f in out.split("\0") if f]
    except (OSError, subprocess.CalledProcessError):
        files = []
        for d, dirs, names in os.walk(root):
            dirs[:] = [x for x in dirs if not x.startswith(".") and not x.startswith("build")]
            files += [os.path.relpath(os.path.join(d, n), root) for n in names]
    return [f for f in files if os.path.isfile(os.path.join(root, f))
            and not f.startswith(SKIP_PREFIXES)]


# One C lexeme at a time: comments are renamed in, literals and #include lines
# are kept as they are.
C_LEX = re.compile(r"""
    (?P<keep> "(?:\\.|[^"\\\n])*"           # string literal
            | '(?:\\.|[^'\\\n])*'           # character literal
            | ^[ \t]*\#[ \t]*include[^\n]*  # include line
    )
  | (?P<ident> [A-Za-z_][A-Za-z0-9_]* )
  | (?P<other> //[^\n]* | /\*.*?\*/ | . )
""", re.S | re.M | re.X)
WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
MEMBER_BEFORE = re.compile(r"(?:\.|->)\s*$")
FILE_AFTER = re.compile(r"\.[ch]\b")


def c_rename(text, idents, tags):
    """Rename identifiers and tags in C text; returns (new text, count)."""
    words = set(WORD.findall(text))
    out = []
    n = 0
    prev_word = None  # the last identifier, for `struct old`
    for m in C_LEX.finditer(text):
        tok = m.group(0)
        if m.group("ident"):
            new = None
            if prev_word in ("struct", "enum", "union") and tok in tags:
                new = tags[tok]
            elif tok in idents:
                before = text[max(0, m.start() - 8):m.start()]
                if not MEMBER_BEFORE.search(before) and not FILE_AFTER.match(text, m.end()):
                    new = idents[tok]
            prev_word = tok
            if new:
                tok = new
                n += 1
        elif m.group("other"):
            if tok.startswith("/*") or tok.startswith("//"):
                tok, k = doc_rename(tok, idents, tags, code=True, words=words)
                n += k
                prev_word = None
            elif not tok.isspace():
                prev_word = None
        else:
            prev_word = None
        out.append(tok)
    return "".join(out), n


def doc_rename(text, idents, tags, code=False, words=None):
    """Rename in prose: `old(`, upper-case macros, `struct old`; in comments
    of C code every whole word (they name the code around them).  words:
    the identifiers of the whole file."""
    n = 0
    if words is None:
        words = set(WORD.findall(text))
    renamed = set(idents.values())

    def word(m):
        nonlocal n
        w = m.group(0)
        s, e = m.start(), m.end()
        before = text[max(0, s - 8):s]
        if before.endswith(("/", ".", "-", "$", "@", "'", '"')) and not code:
            return w
        if FILE_AFTER.match(text, e) or text.startswith(".{", e):
            return w
        if re.search(r"\b(?:struct|enum|union)\s+$", before) and w in tags:
            n += 1
            return tags[w]
        if w.isupper() and w.endswith("_") and text.startswith("*", e) and \
                not any(x.startswith(w) and x != w and x not in idents and x not in renamed
                        for x in words):
            # FMT_*_MAX, TLS_WANT_*: a family of macros renamed alike (unless
            # the file has names of its own in it: clickhouse.c's FMT_*)
            news = {idents[o][:len(idents[o]) - len(o) + len(w)]
                    for o in idents if o.startswith(w) and idents[o].endswith(o[len(w):])}
            if len(news) == 1:
                n += 1
                return news.pop()
        if w in idents:
            if code or w.isupper() or text.startswith("(", e) or \
               (before.endswith("`") and text.startswith("`", e)):
                n += 1
                return idents[w]
        return w

    return WORD.sub(word, text), n


def collisions(root, files, idents, tags):
    """Names to rename whose new name is already taken."""
    words, tagset = set(), set()
    for f in files:
        if f.endswith(C_EXT):
            text = open(os.path.join(root, f), encoding="utf-8", errors="surrogateescape").read()
            for m in C_LEX.finditer(text):
                if m.group("ident"):
                    words.add(m.group(0))
            tagset.update(re.findall(r"\b(?:struct|enum|union)\s+([A-Za-z_]\w*)", text))
    bad = []
    for old, new in idents.items():
        if old in words and new in words:
            bad.append(f"{old} -> {new}: {new} is already used")
    for old, new in tags.items():
        if old in tagset and new in tagset:
            bad.append(f"struct {old} -> {new}: {new} is already a tag")
    return bad, words, tagset


def main(argv):
    mode = None
    args = [a for a in argv[1:] if not a.startswith("--")]
    for a in argv[1:]:
        if a in ("--dry-run", "--check"):
            mode = a
        elif a.startswith("--"):
            sys.exit(f"usage: {argv[0]} [--dry-run|--check] [REPO_ROOT]")
    root = args[0] if args else "."
    if not os.path.isdir(os.path.join(root, "plugins", "common")):
        sys.exit(f"{root}: not a sluice tree")

    ident_pairs, tag_pairs = table(IDENTS), table(TAGS)
    for pairs in (ident_pairs, tag_pairs):
        olds = [o for o, _ in pairs]
        news = [n for _, n in pairs]
        dup = {x for x in olds + news if (olds + news).count(x) > 1}
        if dup:
            sys.exit("rename_dialect: table names twice: " + " ".join(sorted(dup)))
    idents, tags = dict(ident_pairs), dict(tag_pairs)

    files = tracked_files(root)
    bad, words, tagset = collisions(root, files, idents, tags)
    if bad:
        print("rename_dialect: new names collide with existing ones:", file=sys.stderr)
        for b in bad:
            print("  " + b, file=sys.stderr)
        return 2

    todo = [o for o in idents if o in words] + [o for o in tags if o in tagset]
    changed = {}
    for f in files:
        path = os.path.join(root, f)
        if not (f.endswith(C_EXT) or f.endswith(DOC_EXT)):
            continue
        try:
            text = open(path, encoding="utf-8").read()
        except UnicodeDecodeError:
            continue
        if f.endswith(C_EXT):
            new, n = c_rename(text, idents, tags)
        else:
            new, n = doc_rename(text, idents, tags)
        if new != text:
            changed[f] = (new, n)

    if mode == "--check":
        left = sorted(todo)
        if left or changed:
            print("rename_dialect: still spelled the old way: " + " ".join(left or sorted(changed)))
            return 1
        return 0
    for f, (_, n) in sorted(changed.items()):
        print(f"{f}: {n}")
    if mode == "--dry-run":
        return 0
    for f, (new, _) in changed.items():
        with open(os.path.join(root, f), "w", encoding="utf-8") as fh:
            fh.write(new)
    print(f"rename_dialect: {len(todo)} names renamed, {len(changed)} files edited")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
