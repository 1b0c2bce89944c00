# ruff: noqa: E501 (a command line is kept as the page shows it)
"""Which test runs each `paidtwice` command a how-to page, docs/index.md or README.md shows.

A command line (as tests/docs/test_commands_in_docs.py reads it from the page) -> the node id of a test that
runs that command. test_commands_in_docs checks that the test exists and that its code (with the helpers and
fixtures it names from its own module, its conftest.py files and the test modules it imports) holds the
command's subcommand and every option the page shows, as string literals. The values may differ: a test runs
the page's command against the lab's server and its own files.

A command with a placeholder (`--admin-url ADMIN_URL`, `...`) is illustrative instead, and its code block says
why in a comment.
"""

from __future__ import annotations

RUN_BY: dict[str, str] = {
    "paidtwice provision": ("tests/cli/test_smoke.py::test_provision_says_where_the_server_is"),
    "paidtwice lint src/": ("tests/cli/test_smoke.py::test_lint_finds_a_model_call_outside_the_journal"),
    "paidtwice sweep --app agent:app --app-dir src --check": (
        "tests/sweep/test_sweep_app.py::test_records_have_the_documented_fields"
    ),
    'paidtwice sweep --app agent:app --service Planner --handler run_naive --input \'{"city": "Lyon", "nights": 2}\' --app-dir tests/sweep/auto_agent': (
        "tests/sweep/test_sweep_auto.py::test_auto_answers_drive_the_tool_loop"
    ),
    'paidtwice sweep --app agent:app --service Planner --handler run_naive --input \'{"city": "Lyon", "nights": 2}\' --app-dir tests/sweep/auto_agent --write-script answers.toml': (
        "tests/sweep/test_sweep_auto.py::test_written_script_replays_the_auto_sweep"
    ),
    'paidtwice record --app agent:app --service Planner --handler run_naive --input \'{"city": "Lyon", "nights": 2}\' --app-dir tests/sweep/auto_agent --upstream https://api.openai.com/v1 --out answers.toml': (
        "tests/sweep/test_record.py::test_record_then_sweep_offline"
    ),
    'paidtwice sweep --app agent:app --service Planner --handler run_naive --input \'{"city": "Lyon", "nights": 2}\' --app-dir tests/sweep/auto_agent --script answers.toml': (
        "tests/sweep/test_record.py::test_record_then_sweep_offline"
    ),
    "paidtwice sweep --app agent:app --app-dir tests/sweep/coverage_agent --variation steady --input '\"A weekend in Paris\"'": (
        "tests/sweep/test_sweep_coverage.py::test_every_tool_reaches_the_tool_no_answer_called_and_sweeps_what_follows_it"
    ),
    "paidtwice sweep --app agent:app --app-dir tests/sweep/coverage_agent --variation steady --input '\"A weekend in Paris\"' --every-tool": (
        "tests/sweep/test_sweep_coverage.py::test_every_tool_reaches_the_tool_no_answer_called_and_sweeps_what_follows_it"
    ),
    "paidtwice sweep --app handoff_naive --app-dir tests/sweep/tree_agents --variation steady --check": (
        "tests/sweep/test_sweep_tree.py::test_the_naive_callee_is_found_and_named"
    ),
    "paidtwice check": ("tests/check/test_check.py::test_naive_agent_fails_the_check"),
    "paidtwice check --format github --sarif paidtwice.sarif --junit paidtwice-junit.xml": (
        "tests/check/test_check_formats.py::test_github_format_annotates_the_findings_line_and_writes_sarif_and_junit"
    ),
    "paidtwice report shard-1.json shard-2.json --check -o report.html": (
        "tests/check/test_check.py::test_shards_together_are_one_run"
    ),
    "paidtwice sweep --app openai_agents_app:app --service AgentsDurable --handler quote --input '\"How much is 120 EUR in USD?\"' --script examples/frameworks/script.toml --app-dir examples/frameworks --variation steady --check": (
        "tests/sweep/test_sweep_frameworks.py::test_framework_form_swept"
    ),
    "paidtwice lint src/paidtwice/agent/weather.py": (
        "tests/lint/test_lint.py::test_cli_prints_one_finding_a_line_and_exits_1"
    ),
    "paidtwice lint examples/ts_agent/agent.ts": (
        "tests/lint/test_lint_ts.py::test_the_ts_agent_is_flagged_once_at_its_naive_model_call"
    ),
    "paidtwice lint tests/lint/corpus_ts/template_naive.ts": (
        "tests/lint/test_lint_ts.py::test_cli_text_json_github_sarif_and_junit"
    ),
    "paidtwice lint --target-version 3.14 src/": (
        "tests/lint/test_target_version.py::test_a_target_newer_than_any_parser_found_is_one_clear_line"
    ),
    "paidtwice sweep --cmd 'node agent.ts' --cwd examples/ts_agent --service Agent --handler run --input '\"What should I wear in Paris today?\"' --script examples/ts_agent/script.toml": (
        "tests/sweep/test_sweep_command.py::test_every_kill_lands_where_its_point_says"
    ),
    "paidtwice sweep --cmd 'node src/template.ts' --cwd tests/ts_corpus --check": (
        "tests/sweep/test_ts_corpus.py::test_the_template_is_swept_with_nothing_but_its_command"
    ),
    "paidtwice recover inv_1a2b3c --admin-url http://127.0.0.1:9070": (
        "tests/cli/test_smoke.py::test_a_completed_invocation_has_nothing_to_explain_or_recover"
    ),
    "paidtwice recover inv_1a2b3c --apply restart-from:6": (
        "tests/lab/test_recover.py::test_restart_from_a_completed_prefix_keeps_the_answer_and_the_tool_result"
    ),
    "paidtwice capture journals/ --service Agent --status paused --last 100": (
        "tests/replay/test_replay_seed.py::test_journal_save_and_capture_write_journal_files"
    ),
    "paidtwice journal inv_1a2b3c --save journals/inv_1a2b3c.json": (
        "tests/replay/test_replay_seed.py::test_journal_save_and_capture_write_journal_files"
    ),
    "paidtwice replay-check --app agent:app --app-dir src journals/": (
        "tests/replay/test_one_index.py::test_every_output_names_the_entry_by_the_journals_index"
    ),
    "paidtwice replay-check --app agent:app journals/ --json replay-check.json --html replay-check.html": (
        "tests/replay/test_one_index.py::test_every_output_names_the_entry_by_the_journals_index"
    ),
    "paidtwice sweep --app agent:app --service Router --handler run_naive --input '\"I was charged twice for my subscription this month.\"' --script examples/router_agent/script.toml --app-dir examples/router_agent --variation steady": (
        "tests/sweep/test_sweep_patterns.py::test_naive_pays_again_at_every_point_after_an_answer"
    ),
    "paidtwice soak --app agent --app-dir tests/soak/planner_agent --invocations 40 --kills 2": (
        "tests/soak/test_targets.py::test_an_app_soaks_with_no_script_and_nothing_named"
    ),
    'paidtwice soak --app concierge:app --app-dir tests/agents --service Concierge --handler plan --input \'{"city": "Lisbon", "pause": 2, "asks": 2}\' --script tests/agents/concierge.toml --invocations 1000 --kills 5': (
        "tests/soak/test_app.py::test_a_journaled_user_agent_loses_nothing_and_stays_within_the_bound"
    ),
    "paidtwice sweep": ("tests/cli/test_smoke.py::test_sweep_of_the_journaled_agent_passes_its_check"),
    "paidtwice sweep --mode journaled --script changed --json sweep.json": (
        "tests/cli/test_smoke.py::test_sweep_of_the_journaled_agent_passes_its_check"
    ),
    "paidtwice sweep --app agent:app --service Travel --handler quote --input '\"How much is 120 EUR in USD?\"' --script examples/travel_agent/script.toml --app-dir examples/travel_agent --check": (
        "tests/sweep/test_sweep_app.py::test_records_have_the_documented_fields"
    ),
    "paidtwice watch --admin-url http://restate.internal:9070": (
        "tests/watch/test_watch.py::test_the_live_watch_serves_it_by_service_and_ran_the_hook_once"
    ),
    "paidtwice watch --once --json stuck.json --admin-url http://restate.internal:9070": (
        "tests/watch/test_watch.py::test_report_reads_a_snapshot_back_into_its_page"
    ),
    "paidtwice report stuck.json -o stuck.html": (
        "tests/watch/test_watch.py::test_report_reads_a_snapshot_back_into_its_page"
    ),
    "paidtwice watch --admin-url http://restate.internal:9070 --profile checkout-sweep.json --price-model gpt-4o": (
        "tests/watch/test_watch.py::test_report_reads_a_snapshot_back_into_its_page"
    ),
    "paidtwice lab up --app payment_agent:app --app-dir tests/watch --script tests/watch/checkout.toml --variation changed --info lab.json": (
        "tests/watch/test_watch.py::test_the_live_watch_serves_it_by_service_and_ran_the_hook_once"
    ),
    "paidtwice sweep --app agent:app --service Approval --handler refund --input '\"refund order 42\"' --script tests/sweep/approval_agent/script.toml --app-dir tests/sweep/approval_agent --check": (
        "tests/sweep/test_sweep_approval.py::test_check_exits_1_on_the_naive_twin_and_names_the_repaid_call"
    ),
}
