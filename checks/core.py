"""The check engine's API in one import: clauses, verdicts, transcripts, reports, phases and suites.

The engine lives in modules by concern: `checks.verdicts` (verdicts, gates,
outcomes, the rollup across phases), `checks.report` (clauses, catalogues and
the report a run fills), `checks.suite` (options, phase contexts, suites and
the run loop), `checks.evidence` (transcripts), `checks.errors` (what phases
and transports raise) and `checks.timing`. Suites import them from here.
Nothing here knows about the web app.
"""

from __future__ import annotations

from checks.errors import NoReply as NoReply
from checks.errors import PhaseStopped as PhaseStopped
from checks.errors import TargetUnreachable as TargetUnreachable
from checks.evidence import Evidence as Evidence
from checks.evidence import Transcript as Transcript
from checks.evidence import evidence_list as evidence_list
from checks.evidence import summarize as summarize
from checks.evidence import truncate as truncate
from checks.report import HARNESS_VERSION as HARNESS_VERSION
from checks.report import Announcer as Announcer
from checks.report import Catalogue as Catalogue
from checks.report import Clause as Clause
from checks.report import ClauseResult as ClauseResult
from checks.report import NullSink as NullSink
from checks.report import Report as Report
from checks.report import Sink as Sink
from checks.report import UnknownClause as UnknownClause
from checks.suite import TEARDOWN_DEADLINE as TEARDOWN_DEADLINE
from checks.suite import Listener as Listener
from checks.suite import ListenerFactory as ListenerFactory
from checks.suite import ListenPolicy as ListenPolicy
from checks.suite import OptionsT as OptionsT
from checks.suite import Phase as Phase
from checks.suite import PhaseContext as PhaseContext
from checks.suite import PhaseFunction as PhaseFunction
from checks.suite import StateT as StateT
from checks.suite import Suite as Suite
from checks.suite import SuiteOptions as SuiteOptions
from checks.suite import run_suite as run_suite
from checks.timing import percentile as percentile
from checks.timing import seconds as seconds
from checks.verdicts import EXIT_CODES as EXIT_CODES
from checks.verdicts import MISSED_VERDICT as MISSED_VERDICT
from checks.verdicts import ROLLUP_RANK as ROLLUP_RANK
from checks.verdicts import VERDICT_RANK as VERDICT_RANK
from checks.verdicts import Gate as Gate
from checks.verdicts import Level as Level
from checks.verdicts import Outcome as Outcome
from checks.verdicts import ResultT as ResultT
from checks.verdicts import RolledUp as RolledUp
from checks.verdicts import RootCause as RootCause
from checks.verdicts import Verdict as Verdict
from checks.verdicts import cause_of as cause_of
from checks.verdicts import outcome_of as outcome_of
from checks.verdicts import roll_up as roll_up
from checks.verdicts import rolled_verdicts as rolled_verdicts
from checks.verdicts import root_causes as root_causes
from checks.verdicts import verdict_counts as verdict_counts
from checks.verdicts import worst as worst
