"""The quick tier: what `bash scripts/test.sh --quick` (`pytest -m quick`) runs, in one table.

The pure logic (timelines and crash points, the replay-count prediction, script matching, schema values,
records, the reports on captured fixtures, the lint rules, the docs' own checks) and one smoke per command
against a real restate-server (tests/cli/test_smoke.py). conftest.py marks what is listed here `quick`; an
entry that matches no test of a collected file stops the run, so a renamed test cannot drop out of the tier
unseen.
An entry is a test file, or a file and a test name (every parametrized case of it).
"""

from __future__ import annotations

#: Every test of these files, or of these tests, is quick.
QUICK: tuple[str, ...] = (
    "tests/cli/test_smoke.py",
    "tests/sweep/test_record.py::test_record_then_sweep_offline",
    "tests/sweep/test_schedule.py",
    "tests/sweep/test_kept_plan.py::test_a_changed_agent_has_another_key_its_records_and_docs_do_not",
    "tests/sweep/test_kept_plan.py::test_plans_are_the_same_when_only_their_times_differ",
    "tests/sweep/test_kept_plan.py::test_a_kept_plan_reads_back_and_a_broken_file_is_no_plan",
    "tests/check/test_check.py::test_naive_agent_fails_the_check",
    "tests/check/test_ci_recipe.py",
    "tests/check/test_config.py::test_a_broken_config_is_one_line_and_exit_2",
    "tests/check/test_config.py::test_no_config_says_where_to_put_one",
    "tests/check/test_config.py::test_paths_are_relative_to_the_file",
    "tests/check/test_config.py::test_a_pyproject_without_the_table_is_passed_over",
    "tests/test_api.py",
    "tests/test_layout.py",
    "tests/watch/test_attempts.py",
    "tests/conformance/test_corpus_coverage.py",
    "tests/conformance/test_ts_corpus_coverage.py",
    "tests/results/test_kinds.py",
    "tests/engine/test_journal_reader.py",
    "tests/engine/test_http.py",
    "tests/stub/test_ledger.py",
    "tests/lab/test_mismatch_reader.py",
    "tests/lab/test_fault_kinds.py",
    "tests/lab/test_mismatch_runs.py::test_prediction_is_exact_only_between_jitter_windows",
    "tests/lab/test_mismatch_runs.py::test_a_point_agrees_only_inside_its_predicted_range",
    "tests/replay/test_replay_corpus.py",
    "tests/replay/test_replay_requests.py",
    "tests/replay/test_replay_step_hints.py",
    "tests/stub/test_script_turns.py",
    "tests/stub/test_stub_apis.py",
    "tests/stub/test_stub_usage.py",
    "tests/agent/test_wire.py",
    "tests/agent/test_app_discovery.py",
    "tests/agent/test_preload.py",
    "tests/cli/test_cli.py::test_every_command_has_help_with_an_example",
    "tests/cli/test_cli.py::test_bad_input_is_a_click_error_with_exit_2",
    "tests/report/test_report.py::test_captured_results_read_back_as_the_lab_wrote_them",
    "tests/report/test_report.py::test_report_writes_one_page_that_fetches_nothing",
    "tests/report/test_report.py::test_fields_a_record_gains_later_are_ignored_and_missing_optional_ones_default",
    "tests/report/test_report.py::test_captured_fixtures_are_of_the_current_format",
    "tests/report/test_report.py::test_sweep_cells_and_summary_say_fractions_of_a_cent",
    "tests/report/test_report.py::test_timeline_numbers_do_not_print_over_one_another",
    "tests/report/test_report.py::test_a_point_that_starts_late_is_drawn_from_its_first_event",
    "tests/report/test_report.py::test_a_kill_that_missed_its_moment_is_written_on_its_cell",
    "tests/report/test_report.py::test_a_run_without_model_calls_says_so_instead_of_an_empty_table",
    "tests/report/test_report.py::test_what_the_model_and_the_code_said_is_shown_as_text_never_as_markup",
    "tests/report/test_report.py::test_the_deck_table_says_what_each_row_paid_the_model_as_the_terminal_does",
    "tests/soak/test_bound.py",
    "tests/soak/test_app.py::test_a_kill_counts_its_own_process_s_calls_whenever_the_stub_read_them",
    "tests/sweep/test_derive_points.py",
    "tests/sweep/test_tree_timeline.py",
    "tests/sweep/test_callees.py",
    "tests/sweep/test_unfinished.py",
    "tests/sweep/test_pytest_helpers.py::test_a_target_names_its_own_handler",
    "tests/sweep/test_timeline_fixture.py",
    "tests/lint/test_adk.py",
    "tests/lint/test_lint.py",
    "tests/lint/test_target_version.py",
    "tests/schema/test_values.py",
    "tests/stub/test_auto.py",
    "tests/docs/test_site.py",
)

#: The smoke of each command (every command has one: tests/test_tiers.py checks it).
SMOKES: dict[str, str] = {
    "capture": "tests/cli/test_smoke.py::test_capture_writes_the_journal_file",
    "check": "tests/check/test_check.py::test_naive_agent_fails_the_check",
    "deck": "tests/cli/test_smoke.py::test_deck_matches_one_row",
    "experiments": "tests/cli/test_smoke.py::test_experiments_lists_the_deck",
    "explain": "tests/cli/test_smoke.py::test_a_completed_invocation_has_nothing_to_explain_or_recover",
    "journal": "tests/cli/test_smoke.py::test_journal_prints_the_invocation_by_index",
    "lab": "tests/cli/test_smoke.py::test_lab_up_serves_until_sigterm_and_watch_finds_nothing_stuck_on_it",
    "lint": "tests/cli/test_smoke.py::test_lint_finds_a_model_call_outside_the_journal",
    "provision": "tests/cli/test_smoke.py::test_provision_says_where_the_server_is",
    "record": "tests/sweep/test_record.py::test_record_then_sweep_offline",
    "recover": "tests/cli/test_smoke.py::test_a_completed_invocation_has_nothing_to_explain_or_recover",
    "replay-check": "tests/cli/test_smoke.py::test_replay_check_replays_a_captured_journal",
    "report": "tests/cli/test_smoke.py::test_report_makes_one_page",
    "run": "tests/cli/test_smoke.py::test_run_measures_one_row",
    "soak": "tests/cli/test_smoke.py::test_soak_loses_nothing",
    "sweep": "tests/cli/test_smoke.py::test_sweep_of_the_journaled_agent_passes_its_check",
    "watch": "tests/cli/test_smoke.py::test_lab_up_serves_until_sigterm_and_watch_finds_nothing_stuck_on_it",
}

#: Session fixtures (tests/conftest.py) that cost each worker making them a run of the whole deck or three
#: replay-checks (about 40 s on CI): the files that use them run on one worker, one after the other, so each
#: is made once, not once on every worker (conftest.py's scheduler keeps these files together; a file that
#: uses one and is not listed in SHARED_FILES, or one listed that uses none, stops the run).
SHARED_FIXTURES: tuple[str, ...] = ("deck_records", "replay_check_results")
SHARED_FILES: tuple[str, ...] = (
    "tests/cli/test_cli.py",
    "tests/docs/test_schemas.py",
    "tests/knobs/test_defaults_rows.py",
    "tests/knobs/test_knob_rows.py",
    "tests/lab/test_bill.py",
    "tests/lab/test_deck_runs.py",
    "tests/lab/test_mismatch_runs.py",
    "tests/lab/test_recover.py",
    "tests/replay/test_replay_recover.py",
    "tests/report/test_report_browser.py",
    "tests/report/test_report_replay_check.py",
    "tests/sweep/test_sweep_words.py",
    "tests/test_hygiene.py",
)

#: The longest test files, with their summed test time in seconds on CI (2 cores, 3 workers). From CI's list
#: of its 25 slowest durations, for the files it names (a file's longest fixture or test: at least that); for
#: the files whose fixtures changed since, that figure scaled by a run of the file alone before and after the
#: change, side by side on the shared 2-core machine; the others from the last whole-suite junit run
#: (`pytest -n 2 --dist loadfile --junitxml` beside other test runs, so upper bounds). With `--dist loadfile`
#: a worker takes the next file when it is free, in collection order (conftest.py turns pytest-xdist's own
#: order, most tests first, off): the longest files go first, so that none starts last and keeps one worker
#: running while the others are idle. conftest.py collects them in this order (longest first), the rest
#: after them as found; a file named here that does not exist stops the run. Only the order matters: update
#: the figures from a whole-suite junit run when they drift, and name a new file here once it sweeps.
LONGEST: dict[str, float] = {
    "tests/sweep/test_sweep_cmd_vs_app.py": 265,
    "tests/sweep/test_sweep_app.py": 252,
    "tests/soak/test_soak.py": 244,
    "tests/conformance/test_ts_corpus_sweep.py": 196,  # its own run beside other test runs
    "tests/sweep/test_sent_callee.py": 179,  # measured at load 30 to 50, an upper bound
    "tests/sweep/test_sweep_auto.py": 174,
    "tests/sweep/test_made_input.py": 174,  # measured at load 30 to 50, an upper bound
    "tests/engine/test_cluster.py": 173,
    "tests/conformance/test_corpus_sweep.py": 172,
    "tests/sweep/test_sweep_answers.py": 169,
    "tests/watch/test_watch.py": 164,
    "tests/cli/test_cli.py": 159,
    "tests/sweep/test_ts_corpus.py": 155,
    "tests/sweep/test_sweep_command.py": 151,
    "tests/sweep/test_sweep_frameworks.py": 144,
    "tests/soak/test_app.py": 139,
    "tests/check/test_check.py": 132,
    "tests/sweep/test_record.py": 126,
    "tests/sweep/test_sweep_frameworks_auto.py": 120,
    "tests/sweep/test_sweep_tree.py": 113,
    "tests/sweep/test_pytest_helpers.py": 101,
    "tests/sweep/test_sweep_parallel_steps.py": 95,
    "tests/report/test_report_browser.py": 82,
    "tests/sweep/test_sweep_approval.py": 79,
    "tests/check/test_config.py": 69,
    "tests/watch/test_watch_cluster.py": 66,
    "tests/sweep/test_sweep_deck.py": 64,
    "tests/soak/test_targets.py": 64,
    "tests/cli/test_smoke.py": 61,
    "tests/sweep/test_sweep_durable_calls.py": 59,
    "tests/sweep/test_sweep_patterns.py": 58,
    "tests/report/test_report_replay_check.py": 58,
    "tests/sweep/test_sweep_paths.py": 47,
    "tests/lab/test_deck_runs.py": 43,
    "tests/lab/test_bill.py": 42,
    "tests/lab/test_mismatch_runs.py": 41,
    "tests/knobs/test_ts_pause_on_mismatch.py": 41,
    "tests/sweep/test_kept_plan.py": 50,
}
