from collections.abc import Iterable as _Iterable
from collections.abc import Mapping as _Mapping
from typing import ClassVar as _ClassVar

from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper

from checks.rlmesh.proto import spaces_pb2 as _spaces_pb2

DESCRIPTOR: _descriptor.FileDescriptor

class AutoresetMode(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    AUTORESET_MODE_UNSPECIFIED: _ClassVar[AutoresetMode]
    AUTORESET_MODE_NEXT_STEP: _ClassVar[AutoresetMode]
    AUTORESET_MODE_SAME_STEP: _ClassVar[AutoresetMode]
    AUTORESET_MODE_DISABLED: _ClassVar[AutoresetMode]

AUTORESET_MODE_UNSPECIFIED: AutoresetMode
AUTORESET_MODE_NEXT_STEP: AutoresetMode
AUTORESET_MODE_SAME_STEP: AutoresetMode
AUTORESET_MODE_DISABLED: AutoresetMode

class PeerInfo(_message.Message):
    __slots__ = (
        "component",
        "package_version",
        "language",
        "language_version",
        "os",
        "os_version",
        "arch",
        "framework_versions",
        "extra",
    )
    class FrameworkVersionsEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: str | None = ..., value: str | None = ...) -> None: ...

    class ExtraEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: str | None = ..., value: str | None = ...) -> None: ...

    COMPONENT_FIELD_NUMBER: _ClassVar[int]
    PACKAGE_VERSION_FIELD_NUMBER: _ClassVar[int]
    LANGUAGE_FIELD_NUMBER: _ClassVar[int]
    LANGUAGE_VERSION_FIELD_NUMBER: _ClassVar[int]
    OS_FIELD_NUMBER: _ClassVar[int]
    OS_VERSION_FIELD_NUMBER: _ClassVar[int]
    ARCH_FIELD_NUMBER: _ClassVar[int]
    FRAMEWORK_VERSIONS_FIELD_NUMBER: _ClassVar[int]
    EXTRA_FIELD_NUMBER: _ClassVar[int]
    component: str
    package_version: str
    language: str
    language_version: str
    os: str
    os_version: str
    arch: str
    framework_versions: _containers.ScalarMap[str, str]
    extra: _containers.ScalarMap[str, str]
    def __init__(
        self,
        component: str | None = ...,
        package_version: str | None = ...,
        language: str | None = ...,
        language_version: str | None = ...,
        os: str | None = ...,
        os_version: str | None = ...,
        arch: str | None = ...,
        framework_versions: _Mapping[str, str] | None = ...,
        extra: _Mapping[str, str] | None = ...,
    ) -> None: ...

class HandshakeRequest(_message.Message):
    __slots__ = ("protocol_generation", "peer_info", "capabilities", "supported_workflow_editions")
    class CapabilitiesEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: str | None = ..., value: str | None = ...) -> None: ...

    PROTOCOL_GENERATION_FIELD_NUMBER: _ClassVar[int]
    PEER_INFO_FIELD_NUMBER: _ClassVar[int]
    CAPABILITIES_FIELD_NUMBER: _ClassVar[int]
    SUPPORTED_WORKFLOW_EDITIONS_FIELD_NUMBER: _ClassVar[int]
    protocol_generation: str
    peer_info: PeerInfo
    capabilities: _containers.ScalarMap[str, str]
    supported_workflow_editions: _containers.RepeatedScalarFieldContainer[str]
    def __init__(
        self,
        protocol_generation: str | None = ...,
        peer_info: PeerInfo | _Mapping | None = ...,
        capabilities: _Mapping[str, str] | None = ...,
        supported_workflow_editions: _Iterable[str] | None = ...,
    ) -> None: ...

class HandshakeResponse(_message.Message):
    __slots__ = ("compatible", "peer_info", "capabilities", "supported_workflow_editions", "error_message")
    class CapabilitiesEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: str | None = ..., value: str | None = ...) -> None: ...

    COMPATIBLE_FIELD_NUMBER: _ClassVar[int]
    PEER_INFO_FIELD_NUMBER: _ClassVar[int]
    CAPABILITIES_FIELD_NUMBER: _ClassVar[int]
    SUPPORTED_WORKFLOW_EDITIONS_FIELD_NUMBER: _ClassVar[int]
    ERROR_MESSAGE_FIELD_NUMBER: _ClassVar[int]
    compatible: bool
    peer_info: PeerInfo
    capabilities: _containers.ScalarMap[str, str]
    supported_workflow_editions: _containers.RepeatedScalarFieldContainer[str]
    error_message: str
    def __init__(
        self,
        compatible: bool | None = ...,
        peer_info: PeerInfo | _Mapping | None = ...,
        capabilities: _Mapping[str, str] | None = ...,
        supported_workflow_editions: _Iterable[str] | None = ...,
        error_message: str | None = ...,
    ) -> None: ...

class ShutdownRequest(_message.Message):
    __slots__ = ("reason",)
    REASON_FIELD_NUMBER: _ClassVar[int]
    reason: str
    def __init__(self, reason: str | None = ...) -> None: ...

class ShutdownResponse(_message.Message):
    __slots__ = ("accepted", "message")
    ACCEPTED_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_FIELD_NUMBER: _ClassVar[int]
    accepted: bool
    message: str
    def __init__(self, accepted: bool | None = ..., message: str | None = ...) -> None: ...

class EnvSpec(_message.Message):
    __slots__ = ("id", "action_space", "observation_space", "metadata")
    ID_FIELD_NUMBER: _ClassVar[int]
    ACTION_SPACE_FIELD_NUMBER: _ClassVar[int]
    OBSERVATION_SPACE_FIELD_NUMBER: _ClassVar[int]
    METADATA_FIELD_NUMBER: _ClassVar[int]
    id: str
    action_space: _spaces_pb2.SpaceSpec
    observation_space: _spaces_pb2.SpaceSpec
    metadata: _spaces_pb2.MetaMap
    def __init__(
        self,
        id: str | None = ...,
        action_space: _spaces_pb2.SpaceSpec | _Mapping | None = ...,
        observation_space: _spaces_pb2.SpaceSpec | _Mapping | None = ...,
        metadata: _spaces_pb2.MetaMap | _Mapping | None = ...,
    ) -> None: ...

class EnvContract(_message.Message):
    __slots__ = ("spec", "num_envs", "render_mode", "autoreset_mode")
    SPEC_FIELD_NUMBER: _ClassVar[int]
    NUM_ENVS_FIELD_NUMBER: _ClassVar[int]
    RENDER_MODE_FIELD_NUMBER: _ClassVar[int]
    AUTORESET_MODE_FIELD_NUMBER: _ClassVar[int]
    spec: EnvSpec
    num_envs: int
    render_mode: str
    autoreset_mode: AutoresetMode
    def __init__(
        self,
        spec: EnvSpec | _Mapping | None = ...,
        num_envs: int | None = ...,
        render_mode: str | None = ...,
        autoreset_mode: AutoresetMode | str | None = ...,
    ) -> None: ...
