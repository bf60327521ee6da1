"""Contains all the data models used in inputs/outputs"""

from .analysis import Analysis
from .analysis_env_vars_type_0 import AnalysisEnvVarsType0
from .analysis_environment_type_0 import AnalysisEnvironmentType0
from .analysis_environment_type_0_declared_image_type_0 import (
    AnalysisEnvironmentType0DeclaredImageType0,
)
from .analysis_environment_type_0_image_source_type_1 import (
    AnalysisEnvironmentType0ImageSourceType1,
)
from .analysis_environment_type_0_image_source_type_2_type_1 import (
    AnalysisEnvironmentType0ImageSourceType2Type1,
)
from .analysis_environment_type_0_image_source_type_3_type_1 import (
    AnalysisEnvironmentType0ImageSourceType3Type1,
)
from .analysis_environment_type_0_steps_item import AnalysisEnvironmentType0StepsItem
from .analysis_environment_type_0_toolchains_item import (
    AnalysisEnvironmentType0ToolchainsItem,
)
from .analysis_experiments_item import AnalysisExperimentsItem
from .analysis_experiments_item_kind import AnalysisExperimentsItemKind
from .analysis_experiments_item_parameters_item import (
    AnalysisExperimentsItemParametersItem,
)
from .analysis_experiments_item_parameters_item_category import (
    AnalysisExperimentsItemParametersItemCategory,
)
from .analysis_language import AnalysisLanguage
from .analysis_log_event_type_0 import AnalysisLogEventType0
from .analysis_log_event_type_0_event import AnalysisLogEventType0Event
from .analysis_log_event_type_1 import AnalysisLogEventType1
from .analysis_log_event_type_1_event import AnalysisLogEventType1Event
from .analysis_log_event_type_2 import AnalysisLogEventType2
from .analysis_log_event_type_2_event import AnalysisLogEventType2Event
from .analysis_page import AnalysisPage
from .analysis_repo_summary_type_0 import AnalysisRepoSummaryType0
from .analysis_repo_summary_type_0_language import AnalysisRepoSummaryType0Language
from .analysis_repo_summary_type_0_languages_item import (
    AnalysisRepoSummaryType0LanguagesItem,
)
from .analysis_repo_summary_type_0_skipped import AnalysisRepoSummaryType0Skipped
from .analysis_status import AnalysisStatus
from .analysis_trigger import AnalysisTrigger
from .analysis_trigger_kind import AnalysisTriggerKind
from .api_key import ApiKey
from .api_key_page import ApiKeyPage
from .api_key_scopes_item import ApiKeyScopesItem
from .connect_git_hub_installation import ConnectGitHubInstallation
from .create_analysis import CreateAnalysis
from .create_analysis_language import CreateAnalysisLanguage
from .create_api_key import CreateApiKey
from .create_api_key_scopes_item import CreateApiKeyScopesItem
from .create_environment_variable import CreateEnvironmentVariable
from .create_notification_endpoint import CreateNotificationEndpoint
from .create_notification_endpoint_events_item import (
    CreateNotificationEndpointEventsItem,
)
from .create_repository import CreateRepository
from .create_run import CreateRun
from .create_run_environment import CreateRunEnvironment
from .create_run_parameters import CreateRunParameters
from .created_api_key import CreatedApiKey
from .created_api_key_scopes_item import CreatedApiKeyScopesItem
from .created_notification_endpoint import CreatedNotificationEndpoint
from .created_notification_endpoint_events_item import (
    CreatedNotificationEndpointEventsItem,
)
from .environment import Environment
from .environment_manifests_item import EnvironmentManifestsItem
from .environment_page import EnvironmentPage
from .environment_status import EnvironmentStatus
from .environment_steps_item import EnvironmentStepsItem
from .environment_toolchains_item import EnvironmentToolchainsItem
from .environment_variable import EnvironmentVariable
from .environment_variable_page import EnvironmentVariablePage
from .error import Error
from .git_hub_install_callback_setup_action import GitHubInstallCallbackSetupAction
from .git_hub_install_url import GitHubInstallUrl
from .installation_repository import InstallationRepository
from .installation_repository_page import InstallationRepositoryPage
from .integration import Integration
from .integration_page import IntegrationPage
from .integration_provider import IntegrationProvider
from .list_commit_runs_status import ListCommitRunsStatus
from .list_runs_status import ListRunsStatus
from .notification_delivery import NotificationDelivery
from .notification_delivery_event import NotificationDeliveryEvent
from .notification_delivery_page import NotificationDeliveryPage
from .notification_delivery_status import NotificationDeliveryStatus
from .notification_delivery_subject import NotificationDeliverySubject
from .notification_delivery_subject_kind import NotificationDeliverySubjectKind
from .notification_endpoint import NotificationEndpoint
from .notification_endpoint_events_item import NotificationEndpointEventsItem
from .notification_endpoint_page import NotificationEndpointPage
from .o_auth_client import OAuthClient
from .o_auth_client_grant_types_item import OAuthClientGrantTypesItem
from .o_auth_client_page import OAuthClientPage
from .o_auth_client_token_endpoint_auth_method import OAuthClientTokenEndpointAuthMethod
from .o_auth_grant import OAuthGrant
from .o_auth_grant_page import OAuthGrantPage
from .o_auth_grant_scopes_item import OAuthGrantScopesItem
from .refused_output import RefusedOutput
from .register_installation_repository import RegisterInstallationRepository
from .repository import Repository
from .repository_commit import RepositoryCommit
from .repository_commit_author import RepositoryCommitAuthor
from .repository_commit_committer import RepositoryCommitCommitter
from .repository_file import RepositoryFile
from .repository_file_encoding import RepositoryFileEncoding
from .repository_page import RepositoryPage
from .repository_provider import RepositoryProvider
from .repository_refs import RepositoryRefs
from .repository_refs_branches_item import RepositoryRefsBranchesItem
from .repository_refs_tags_item import RepositoryRefsTagsItem
from .repository_tree import RepositoryTree
from .repository_tree_entries_item import RepositoryTreeEntriesItem
from .repository_tree_entries_item_type import RepositoryTreeEntriesItemType
from .rerun import Rerun
from .rerun_parameters import RerunParameters
from .run import Run
from .run_attempt import RunAttempt
from .run_environment_type_0 import RunEnvironmentType0
from .run_environment_type_0_cache_type_1 import RunEnvironmentType0CacheType1
from .run_environment_type_0_cache_type_2_type_1 import (
    RunEnvironmentType0CacheType2Type1,
)
from .run_environment_type_0_cache_type_3_type_1 import (
    RunEnvironmentType0CacheType3Type1,
)
from .run_feed_event_type_0 import RunFeedEventType0
from .run_feed_event_type_0_event import RunFeedEventType0Event
from .run_feed_event_type_1 import RunFeedEventType1
from .run_feed_event_type_1_event import RunFeedEventType1Event
from .run_feed_event_type_2 import RunFeedEventType2
from .run_feed_event_type_2_event import RunFeedEventType2Event
from .run_feed_event_type_3 import RunFeedEventType3
from .run_feed_event_type_3_event import RunFeedEventType3Event
from .run_final_metrics import RunFinalMetrics
from .run_log import RunLog
from .run_log_event_type_0 import RunLogEventType0
from .run_log_event_type_0_event import RunLogEventType0Event
from .run_log_event_type_1 import RunLogEventType1
from .run_log_event_type_1_event import RunLogEventType1Event
from .run_log_event_type_2 import RunLogEventType2
from .run_log_event_type_2_event import RunLogEventType2Event
from .run_log_event_type_3 import RunLogEventType3
from .run_log_event_type_3_event import RunLogEventType3Event
from .run_log_event_type_4 import RunLogEventType4
from .run_log_event_type_4_event import RunLogEventType4Event
from .run_log_line import RunLogLine
from .run_log_line_stream import RunLogLineStream
from .run_log_page import RunLogPage
from .run_log_page_stream_type_1 import RunLogPageStreamType1
from .run_log_page_stream_type_2_type_1 import RunLogPageStreamType2Type1
from .run_log_page_stream_type_3_type_1 import RunLogPageStreamType3Type1
from .run_log_search import RunLogSearch
from .run_log_stream import RunLogStream
from .run_metrics import RunMetrics
from .run_metrics_final import RunMetricsFinal
from .run_metrics_series_item import RunMetricsSeriesItem
from .run_metrics_series_item_points_item import RunMetricsSeriesItemPointsItem
from .run_output import RunOutput
from .run_output_list import RunOutputList
from .run_page import RunPage
from .run_parameters import RunParameters
from .run_queue_type_0 import RunQueueType0
from .run_run_config import RunRunConfig
from .run_run_config_parameters import RunRunConfigParameters
from .run_setup_log import RunSetupLog
from .run_setup_log_status_type_1 import RunSetupLogStatusType1
from .run_setup_log_status_type_2_type_1 import RunSetupLogStatusType2Type1
from .run_setup_log_status_type_3_type_1 import RunSetupLogStatusType3Type1
from .run_status import RunStatus
from .run_timeline_item import RunTimelineItem
from .run_timeline_item_cache import RunTimelineItemCache
from .run_timeline_item_event import RunTimelineItemEvent
from .search_run_logs_case_sensitive import SearchRunLogsCaseSensitive
from .search_run_logs_stream import SearchRunLogsStream
from .stream_run_events_status import StreamRunEventsStatus
from .update_environment_variable import UpdateEnvironmentVariable
from .update_notification_endpoint import UpdateNotificationEndpoint
from .update_notification_endpoint_events_item import (
    UpdateNotificationEndpointEventsItem,
)
from .update_repository import UpdateRepository
from .validation_error import ValidationError
from .validation_error_detail_item import ValidationErrorDetailItem
from .webhook_delivery import WebhookDelivery
from .webhook_delivery_page import WebhookDeliveryPage
from .webhook_delivery_status import WebhookDeliveryStatus

__all__ = (
    "Analysis",
    "AnalysisEnvVarsType0",
    "AnalysisEnvironmentType0",
    "AnalysisEnvironmentType0DeclaredImageType0",
    "AnalysisEnvironmentType0ImageSourceType1",
    "AnalysisEnvironmentType0ImageSourceType2Type1",
    "AnalysisEnvironmentType0ImageSourceType3Type1",
    "AnalysisEnvironmentType0StepsItem",
    "AnalysisEnvironmentType0ToolchainsItem",
    "AnalysisExperimentsItem",
    "AnalysisExperimentsItemKind",
    "AnalysisExperimentsItemParametersItem",
    "AnalysisExperimentsItemParametersItemCategory",
    "AnalysisLanguage",
    "AnalysisLogEventType0",
    "AnalysisLogEventType0Event",
    "AnalysisLogEventType1",
    "AnalysisLogEventType1Event",
    "AnalysisLogEventType2",
    "AnalysisLogEventType2Event",
    "AnalysisPage",
    "AnalysisRepoSummaryType0",
    "AnalysisRepoSummaryType0Language",
    "AnalysisRepoSummaryType0LanguagesItem",
    "AnalysisRepoSummaryType0Skipped",
    "AnalysisStatus",
    "AnalysisTrigger",
    "AnalysisTriggerKind",
    "ApiKey",
    "ApiKeyPage",
    "ApiKeyScopesItem",
    "ConnectGitHubInstallation",
    "CreateAnalysis",
    "CreateAnalysisLanguage",
    "CreateApiKey",
    "CreateApiKeyScopesItem",
    "CreateEnvironmentVariable",
    "CreateNotificationEndpoint",
    "CreateNotificationEndpointEventsItem",
    "CreateRepository",
    "CreateRun",
    "CreateRunEnvironment",
    "CreateRunParameters",
    "CreatedApiKey",
    "CreatedApiKeyScopesItem",
    "CreatedNotificationEndpoint",
    "CreatedNotificationEndpointEventsItem",
    "Environment",
    "EnvironmentManifestsItem",
    "EnvironmentPage",
    "EnvironmentStatus",
    "EnvironmentStepsItem",
    "EnvironmentToolchainsItem",
    "EnvironmentVariable",
    "EnvironmentVariablePage",
    "Error",
    "GitHubInstallCallbackSetupAction",
    "GitHubInstallUrl",
    "InstallationRepository",
    "InstallationRepositoryPage",
    "Integration",
    "IntegrationPage",
    "IntegrationProvider",
    "ListCommitRunsStatus",
    "ListRunsStatus",
    "NotificationDelivery",
    "NotificationDeliveryEvent",
    "NotificationDeliveryPage",
    "NotificationDeliveryStatus",
    "NotificationDeliverySubject",
    "NotificationDeliverySubjectKind",
    "NotificationEndpoint",
    "NotificationEndpointEventsItem",
    "NotificationEndpointPage",
    "OAuthClient",
    "OAuthClientGrantTypesItem",
    "OAuthClientPage",
    "OAuthClientTokenEndpointAuthMethod",
    "OAuthGrant",
    "OAuthGrantPage",
    "OAuthGrantScopesItem",
    "RefusedOutput",
    "RegisterInstallationRepository",
    "Repository",
    "RepositoryCommit",
    "RepositoryCommitAuthor",
    "RepositoryCommitCommitter",
    "RepositoryFile",
    "RepositoryFileEncoding",
    "RepositoryPage",
    "RepositoryProvider",
    "RepositoryRefs",
    "RepositoryRefsBranchesItem",
    "RepositoryRefsTagsItem",
    "RepositoryTree",
    "RepositoryTreeEntriesItem",
    "RepositoryTreeEntriesItemType",
    "Rerun",
    "RerunParameters",
    "Run",
    "RunAttempt",
    "RunEnvironmentType0",
    "RunEnvironmentType0CacheType1",
    "RunEnvironmentType0CacheType2Type1",
    "RunEnvironmentType0CacheType3Type1",
    "RunFeedEventType0",
    "RunFeedEventType0Event",
    "RunFeedEventType1",
    "RunFeedEventType1Event",
    "RunFeedEventType2",
    "RunFeedEventType2Event",
    "RunFeedEventType3",
    "RunFeedEventType3Event",
    "RunFinalMetrics",
    "RunLog",
    "RunLogEventType0",
    "RunLogEventType0Event",
    "RunLogEventType1",
    "RunLogEventType1Event",
    "RunLogEventType2",
    "RunLogEventType2Event",
    "RunLogEventType3",
    "RunLogEventType3Event",
    "RunLogEventType4",
    "RunLogEventType4Event",
    "RunLogLine",
    "RunLogLineStream",
    "RunLogPage",
    "RunLogPageStreamType1",
    "RunLogPageStreamType2Type1",
    "RunLogPageStreamType3Type1",
    "RunLogSearch",
    "RunLogStream",
    "RunMetrics",
    "RunMetricsFinal",
    "RunMetricsSeriesItem",
    "RunMetricsSeriesItemPointsItem",
    "RunOutput",
    "RunOutputList",
    "RunPage",
    "RunParameters",
    "RunQueueType0",
    "RunRunConfig",
    "RunRunConfigParameters",
    "RunSetupLog",
    "RunSetupLogStatusType1",
    "RunSetupLogStatusType2Type1",
    "RunSetupLogStatusType3Type1",
    "RunStatus",
    "RunTimelineItem",
    "RunTimelineItemCache",
    "RunTimelineItemEvent",
    "SearchRunLogsCaseSensitive",
    "SearchRunLogsStream",
    "StreamRunEventsStatus",
    "UpdateEnvironmentVariable",
    "UpdateNotificationEndpoint",
    "UpdateNotificationEndpointEventsItem",
    "UpdateRepository",
    "ValidationError",
    "ValidationErrorDetailItem",
    "WebhookDelivery",
    "WebhookDeliveryPage",
    "WebhookDeliveryStatus",
)
