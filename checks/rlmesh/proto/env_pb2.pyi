from collections.abc import Iterable as _Iterable
from collections.abc import Mapping as _Mapping
from typing import ClassVar as _ClassVar

from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper

from checks.rlmesh.proto import core_pb2 as _core_pb2
from checks.rlmesh.proto import spaces_pb2 as _spaces_pb2

DESCRIPTOR: _descriptor.FileDescriptor

class RenderFormat(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    RENDER_FORMAT_UNSPECIFIED: _ClassVar[RenderFormat]
    RENDER_FORMAT_PNG: _ClassVar[RenderFormat]

class EnvErrorCode(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    ENV_ERROR_CODE_UNSPECIFIED: _ClassVar[EnvErrorCode]
    ENV_ERROR_CODE_TIMEOUT: _ClassVar[EnvErrorCode]
    ENV_ERROR_CODE_INVALID_ACTION: _ClassVar[EnvErrorCode]
    ENV_ERROR_CODE_NOT_READY: _ClassVar[EnvErrorCode]
    ENV_ERROR_CODE_BUSY: _ClassVar[EnvErrorCode]
    ENV_ERROR_CODE_UNSUPPORTED: _ClassVar[EnvErrorCode]
    ENV_ERROR_CODE_INTERNAL: _ClassVar[EnvErrorCode]
    ENV_ERROR_CODE_CRASHED: _ClassVar[EnvErrorCode]
    ENV_ERROR_CODE_CANCELLED: _ClassVar[EnvErrorCode]
    ENV_ERROR_CODE_CLOSED: _ClassVar[EnvErrorCode]

RENDER_FORMAT_UNSPECIFIED: RenderFormat
RENDER_FORMAT_PNG: RenderFormat
ENV_ERROR_CODE_UNSPECIFIED: EnvErrorCode
ENV_ERROR_CODE_TIMEOUT: EnvErrorCode
ENV_ERROR_CODE_INVALID_ACTION: EnvErrorCode
ENV_ERROR_CODE_NOT_READY: EnvErrorCode
ENV_ERROR_CODE_BUSY: EnvErrorCode
ENV_ERROR_CODE_UNSUPPORTED: EnvErrorCode
ENV_ERROR_CODE_INTERNAL: EnvErrorCode
ENV_ERROR_CODE_CRASHED: EnvErrorCode
ENV_ERROR_CODE_CANCELLED: EnvErrorCode
ENV_ERROR_CODE_CLOSED: EnvErrorCode

class HandshakeRequest(_message.Message):
    __slots__ = ("base",)
    BASE_FIELD_NUMBER: _ClassVar[int]
    base: _core_pb2.HandshakeRequest
    def __init__(self, base: _core_pb2.HandshakeRequest | _Mapping | None = ...) -> None: ...

class HandshakeResponse(_message.Message):
    __slots__ = ("base", "env_contract")
    BASE_FIELD_NUMBER: _ClassVar[int]
    ENV_CONTRACT_FIELD_NUMBER: _ClassVar[int]
    base: _core_pb2.HandshakeResponse
    env_contract: _core_pb2.EnvContract
    def __init__(
        self,
        base: _core_pb2.HandshakeResponse | _Mapping | None = ...,
        env_contract: _core_pb2.EnvContract | _Mapping | None = ...,
    ) -> None: ...

class ShutdownRequest(_message.Message):
    __slots__ = ("base",)
    BASE_FIELD_NUMBER: _ClassVar[int]
    base: _core_pb2.ShutdownRequest
    def __init__(self, base: _core_pb2.ShutdownRequest | _Mapping | None = ...) -> None: ...

class ShutdownResponse(_message.Message):
    __slots__ = ("base",)
    BASE_FIELD_NUMBER: _ClassVar[int]
    base: _core_pb2.ShutdownResponse
    def __init__(self, base: _core_pb2.ShutdownResponse | _Mapping | None = ...) -> None: ...

class ResetRequest(_message.Message):
    __slots__ = ("seeds", "options", "timeout_ms", "env_indices", "episode_ids")
    SEEDS_FIELD_NUMBER: _ClassVar[int]
    OPTIONS_FIELD_NUMBER: _ClassVar[int]
    TIMEOUT_MS_FIELD_NUMBER: _ClassVar[int]
    ENV_INDICES_FIELD_NUMBER: _ClassVar[int]
    EPISODE_IDS_FIELD_NUMBER: _ClassVar[int]
    seeds: _containers.RepeatedScalarFieldContainer[int]
    options: _spaces_pb2.MetaMap
    timeout_ms: int
    env_indices: _containers.RepeatedScalarFieldContainer[int]
    episode_ids: _containers.RepeatedScalarFieldContainer[str]
    def __init__(
        self,
        seeds: _Iterable[int] | None = ...,
        options: _spaces_pb2.MetaMap | _Mapping | None = ...,
        timeout_ms: int | None = ...,
        env_indices: _Iterable[int] | None = ...,
        episode_ids: _Iterable[str] | None = ...,
    ) -> None: ...

class ResetResponse(_message.Message):
    __slots__ = ("observation", "infos")
    OBSERVATION_FIELD_NUMBER: _ClassVar[int]
    INFOS_FIELD_NUMBER: _ClassVar[int]
    observation: _spaces_pb2.SpaceValue
    infos: _spaces_pb2.MetaMap
    def __init__(
        self,
        observation: _spaces_pb2.SpaceValue | _Mapping | None = ...,
        infos: _spaces_pb2.MetaMap | _Mapping | None = ...,
    ) -> None: ...

class StepRequest(_message.Message):
    __slots__ = ("action", "timeout_ms", "env_indices", "episode_ids")
    ACTION_FIELD_NUMBER: _ClassVar[int]
    TIMEOUT_MS_FIELD_NUMBER: _ClassVar[int]
    ENV_INDICES_FIELD_NUMBER: _ClassVar[int]
    EPISODE_IDS_FIELD_NUMBER: _ClassVar[int]
    action: _spaces_pb2.SpaceValue
    timeout_ms: int
    env_indices: _containers.RepeatedScalarFieldContainer[int]
    episode_ids: _containers.RepeatedScalarFieldContainer[str]
    def __init__(
        self,
        action: _spaces_pb2.SpaceValue | _Mapping | None = ...,
        timeout_ms: int | None = ...,
        env_indices: _Iterable[int] | None = ...,
        episode_ids: _Iterable[str] | None = ...,
    ) -> None: ...

class EpisodeMetadata(_message.Message):
    __slots__ = (
        "episode_id",
        "seed",
        "env_index",
        "step_count",
        "cumulative_reward",
        "terminated",
        "truncated",
        "start_timestamp_ns",
        "end_timestamp_ns",
        "final_info",
    )
    EPISODE_ID_FIELD_NUMBER: _ClassVar[int]
    SEED_FIELD_NUMBER: _ClassVar[int]
    ENV_INDEX_FIELD_NUMBER: _ClassVar[int]
    STEP_COUNT_FIELD_NUMBER: _ClassVar[int]
    CUMULATIVE_REWARD_FIELD_NUMBER: _ClassVar[int]
    TERMINATED_FIELD_NUMBER: _ClassVar[int]
    TRUNCATED_FIELD_NUMBER: _ClassVar[int]
    START_TIMESTAMP_NS_FIELD_NUMBER: _ClassVar[int]
    END_TIMESTAMP_NS_FIELD_NUMBER: _ClassVar[int]
    FINAL_INFO_FIELD_NUMBER: _ClassVar[int]
    episode_id: str
    seed: int
    env_index: int
    step_count: int
    cumulative_reward: float
    terminated: bool
    truncated: bool
    start_timestamp_ns: int
    end_timestamp_ns: int
    final_info: _spaces_pb2.MetaMap
    def __init__(
        self,
        episode_id: str | None = ...,
        seed: int | None = ...,
        env_index: int | None = ...,
        step_count: int | None = ...,
        cumulative_reward: float | None = ...,
        terminated: bool | None = ...,
        truncated: bool | None = ...,
        start_timestamp_ns: int | None = ...,
        end_timestamp_ns: int | None = ...,
        final_info: _spaces_pb2.MetaMap | _Mapping | None = ...,
    ) -> None: ...

class StepResponse(_message.Message):
    __slots__ = (
        "observation",
        "rewards",
        "terminated_mask",
        "truncated_mask",
        "infos",
        "completed_episodes",
        "env_indices",
    )
    OBSERVATION_FIELD_NUMBER: _ClassVar[int]
    REWARDS_FIELD_NUMBER: _ClassVar[int]
    TERMINATED_MASK_FIELD_NUMBER: _ClassVar[int]
    TRUNCATED_MASK_FIELD_NUMBER: _ClassVar[int]
    INFOS_FIELD_NUMBER: _ClassVar[int]
    COMPLETED_EPISODES_FIELD_NUMBER: _ClassVar[int]
    ENV_INDICES_FIELD_NUMBER: _ClassVar[int]
    observation: _spaces_pb2.SpaceValue
    rewards: _containers.RepeatedScalarFieldContainer[float]
    terminated_mask: bytes
    truncated_mask: bytes
    infos: _spaces_pb2.MetaMap
    completed_episodes: _containers.RepeatedCompositeFieldContainer[EpisodeMetadata]
    env_indices: _containers.RepeatedScalarFieldContainer[int]
    def __init__(
        self,
        observation: _spaces_pb2.SpaceValue | _Mapping | None = ...,
        rewards: _Iterable[float] | None = ...,
        terminated_mask: bytes | None = ...,
        truncated_mask: bytes | None = ...,
        infos: _spaces_pb2.MetaMap | _Mapping | None = ...,
        completed_episodes: _Iterable[EpisodeMetadata | _Mapping] | None = ...,
        env_indices: _Iterable[int] | None = ...,
    ) -> None: ...

class RenderRequest(_message.Message):
    __slots__ = ("env_indices", "timeout_ms")
    ENV_INDICES_FIELD_NUMBER: _ClassVar[int]
    TIMEOUT_MS_FIELD_NUMBER: _ClassVar[int]
    env_indices: _containers.RepeatedScalarFieldContainer[int]
    timeout_ms: int
    def __init__(self, env_indices: _Iterable[int] | None = ..., timeout_ms: int | None = ...) -> None: ...

class RenderResponse(_message.Message):
    __slots__ = ("frame", "format")
    FRAME_FIELD_NUMBER: _ClassVar[int]
    FORMAT_FIELD_NUMBER: _ClassVar[int]
    frame: bytes
    format: RenderFormat
    def __init__(self, frame: bytes | None = ..., format: RenderFormat | str | None = ...) -> None: ...

class CloseEnvsRequest(_message.Message):
    __slots__ = ("reason",)
    REASON_FIELD_NUMBER: _ClassVar[int]
    reason: str
    def __init__(self, reason: str | None = ...) -> None: ...

class CloseEnvsResponse(_message.Message):
    __slots__ = ("final_episodes",)
    FINAL_EPISODES_FIELD_NUMBER: _ClassVar[int]
    final_episodes: _containers.RepeatedCompositeFieldContainer[EpisodeMetadata]
    def __init__(self, final_episodes: _Iterable[EpisodeMetadata | _Mapping] | None = ...) -> None: ...

class ConfigureEnvRequest(_message.Message):
    __slots__ = ("selected_workflow_edition",)
    SELECTED_WORKFLOW_EDITION_FIELD_NUMBER: _ClassVar[int]
    selected_workflow_edition: str
    def __init__(self, selected_workflow_edition: str | None = ...) -> None: ...

class ConfigureEnvResponse(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class EnvError(_message.Message):
    __slots__ = ("code", "message", "is_recoverable", "debug_info", "interrupted_episodes")
    CODE_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_FIELD_NUMBER: _ClassVar[int]
    IS_RECOVERABLE_FIELD_NUMBER: _ClassVar[int]
    DEBUG_INFO_FIELD_NUMBER: _ClassVar[int]
    INTERRUPTED_EPISODES_FIELD_NUMBER: _ClassVar[int]
    code: EnvErrorCode
    message: str
    is_recoverable: bool
    debug_info: str
    interrupted_episodes: _containers.RepeatedCompositeFieldContainer[EpisodeMetadata]
    def __init__(
        self,
        code: EnvErrorCode | str | None = ...,
        message: str | None = ...,
        is_recoverable: bool | None = ...,
        debug_info: str | None = ...,
        interrupted_episodes: _Iterable[EpisodeMetadata | _Mapping] | None = ...,
    ) -> None: ...

class JoinRequest(_message.Message):
    __slots__ = ("reset", "step", "render", "close", "configure", "request_id")
    RESET_FIELD_NUMBER: _ClassVar[int]
    STEP_FIELD_NUMBER: _ClassVar[int]
    RENDER_FIELD_NUMBER: _ClassVar[int]
    CLOSE_FIELD_NUMBER: _ClassVar[int]
    CONFIGURE_FIELD_NUMBER: _ClassVar[int]
    REQUEST_ID_FIELD_NUMBER: _ClassVar[int]
    reset: ResetRequest
    step: StepRequest
    render: RenderRequest
    close: CloseEnvsRequest
    configure: ConfigureEnvRequest
    request_id: str
    def __init__(
        self,
        reset: ResetRequest | _Mapping | None = ...,
        step: StepRequest | _Mapping | None = ...,
        render: RenderRequest | _Mapping | None = ...,
        close: CloseEnvsRequest | _Mapping | None = ...,
        configure: ConfigureEnvRequest | _Mapping | None = ...,
        request_id: str | None = ...,
    ) -> None: ...

class JoinResponse(_message.Message):
    __slots__ = ("reset", "step", "render", "close", "configure", "error", "request_id", "endpoint_total_ns")
    RESET_FIELD_NUMBER: _ClassVar[int]
    STEP_FIELD_NUMBER: _ClassVar[int]
    RENDER_FIELD_NUMBER: _ClassVar[int]
    CLOSE_FIELD_NUMBER: _ClassVar[int]
    CONFIGURE_FIELD_NUMBER: _ClassVar[int]
    ERROR_FIELD_NUMBER: _ClassVar[int]
    REQUEST_ID_FIELD_NUMBER: _ClassVar[int]
    ENDPOINT_TOTAL_NS_FIELD_NUMBER: _ClassVar[int]
    reset: ResetResponse
    step: StepResponse
    render: RenderResponse
    close: CloseEnvsResponse
    configure: ConfigureEnvResponse
    error: EnvError
    request_id: str
    endpoint_total_ns: int
    def __init__(
        self,
        reset: ResetResponse | _Mapping | None = ...,
        step: StepResponse | _Mapping | None = ...,
        render: RenderResponse | _Mapping | None = ...,
        close: CloseEnvsResponse | _Mapping | None = ...,
        configure: ConfigureEnvResponse | _Mapping | None = ...,
        error: EnvError | _Mapping | None = ...,
        request_id: str | None = ...,
        endpoint_total_ns: int | None = ...,
    ) -> None: ...
