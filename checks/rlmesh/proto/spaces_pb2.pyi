from collections.abc import Iterable as _Iterable
from collections.abc import Mapping as _Mapping
from typing import ClassVar as _ClassVar

from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper

DESCRIPTOR: _descriptor.FileDescriptor

class DataType(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    DATA_TYPE_UNSPECIFIED: _ClassVar[DataType]
    DATA_TYPE_BOOL: _ClassVar[DataType]
    DATA_TYPE_UINT8: _ClassVar[DataType]
    DATA_TYPE_UINT16: _ClassVar[DataType]
    DATA_TYPE_UINT32: _ClassVar[DataType]
    DATA_TYPE_UINT64: _ClassVar[DataType]
    DATA_TYPE_INT8: _ClassVar[DataType]
    DATA_TYPE_INT16: _ClassVar[DataType]
    DATA_TYPE_INT32: _ClassVar[DataType]
    DATA_TYPE_INT64: _ClassVar[DataType]
    DATA_TYPE_FLOAT16: _ClassVar[DataType]
    DATA_TYPE_FLOAT32: _ClassVar[DataType]
    DATA_TYPE_FLOAT64: _ClassVar[DataType]

DATA_TYPE_UNSPECIFIED: DataType
DATA_TYPE_BOOL: DataType
DATA_TYPE_UINT8: DataType
DATA_TYPE_UINT16: DataType
DATA_TYPE_UINT32: DataType
DATA_TYPE_UINT64: DataType
DATA_TYPE_INT8: DataType
DATA_TYPE_INT16: DataType
DATA_TYPE_INT32: DataType
DATA_TYPE_INT64: DataType
DATA_TYPE_FLOAT16: DataType
DATA_TYPE_FLOAT32: DataType
DATA_TYPE_FLOAT64: DataType

class UniformBounds(_message.Message):
    __slots__ = ("low", "high")
    LOW_FIELD_NUMBER: _ClassVar[int]
    HIGH_FIELD_NUMBER: _ClassVar[int]
    low: bytes
    high: bytes
    def __init__(self, low: bytes | None = ..., high: bytes | None = ...) -> None: ...

class ElementwiseBounds(_message.Message):
    __slots__ = ("low", "high")
    LOW_FIELD_NUMBER: _ClassVar[int]
    HIGH_FIELD_NUMBER: _ClassVar[int]
    low: bytes
    high: bytes
    def __init__(self, low: bytes | None = ..., high: bytes | None = ...) -> None: ...

class BoxSpec(_message.Message):
    __slots__ = ("unbounded", "uniform", "elementwise")
    UNBOUNDED_FIELD_NUMBER: _ClassVar[int]
    UNIFORM_FIELD_NUMBER: _ClassVar[int]
    ELEMENTWISE_FIELD_NUMBER: _ClassVar[int]
    unbounded: bool
    uniform: UniformBounds
    elementwise: ElementwiseBounds
    def __init__(
        self,
        unbounded: bool | None = ...,
        uniform: UniformBounds | _Mapping | None = ...,
        elementwise: ElementwiseBounds | _Mapping | None = ...,
    ) -> None: ...

class DiscreteSpec(_message.Message):
    __slots__ = ("n", "start")
    N_FIELD_NUMBER: _ClassVar[int]
    START_FIELD_NUMBER: _ClassVar[int]
    n: int
    start: int
    def __init__(self, n: int | None = ..., start: int | None = ...) -> None: ...

class MultiBinarySpec(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class MultiDiscreteSpec(_message.Message):
    __slots__ = ("nvec",)
    NVEC_FIELD_NUMBER: _ClassVar[int]
    nvec: _containers.RepeatedScalarFieldContainer[int]
    def __init__(self, nvec: _Iterable[int] | None = ...) -> None: ...

class TextSpec(_message.Message):
    __slots__ = ("min_length", "max_length", "charset")
    MIN_LENGTH_FIELD_NUMBER: _ClassVar[int]
    MAX_LENGTH_FIELD_NUMBER: _ClassVar[int]
    CHARSET_FIELD_NUMBER: _ClassVar[int]
    min_length: int
    max_length: int
    charset: str
    def __init__(
        self, min_length: int | None = ..., max_length: int | None = ..., charset: str | None = ...
    ) -> None: ...

class DictSpec(_message.Message):
    __slots__ = ("keys", "spaces")
    KEYS_FIELD_NUMBER: _ClassVar[int]
    SPACES_FIELD_NUMBER: _ClassVar[int]
    keys: _containers.RepeatedScalarFieldContainer[str]
    spaces: _containers.RepeatedCompositeFieldContainer[SpaceSpec]
    def __init__(
        self, keys: _Iterable[str] | None = ..., spaces: _Iterable[SpaceSpec | _Mapping] | None = ...
    ) -> None: ...

class TupleSpec(_message.Message):
    __slots__ = ("spaces",)
    SPACES_FIELD_NUMBER: _ClassVar[int]
    spaces: _containers.RepeatedCompositeFieldContainer[SpaceSpec]
    def __init__(self, spaces: _Iterable[SpaceSpec | _Mapping] | None = ...) -> None: ...

class SpaceSpec(_message.Message):
    __slots__ = ("shape", "dtype", "box", "discrete", "multi_binary", "multi_discrete", "text", "dict", "tuple")
    SHAPE_FIELD_NUMBER: _ClassVar[int]
    DTYPE_FIELD_NUMBER: _ClassVar[int]
    BOX_FIELD_NUMBER: _ClassVar[int]
    DISCRETE_FIELD_NUMBER: _ClassVar[int]
    MULTI_BINARY_FIELD_NUMBER: _ClassVar[int]
    MULTI_DISCRETE_FIELD_NUMBER: _ClassVar[int]
    TEXT_FIELD_NUMBER: _ClassVar[int]
    DICT_FIELD_NUMBER: _ClassVar[int]
    TUPLE_FIELD_NUMBER: _ClassVar[int]
    shape: _containers.RepeatedScalarFieldContainer[int]
    dtype: DataType
    box: BoxSpec
    discrete: DiscreteSpec
    multi_binary: MultiBinarySpec
    multi_discrete: MultiDiscreteSpec
    text: TextSpec
    dict: DictSpec
    tuple: TupleSpec
    def __init__(
        self,
        shape: _Iterable[int] | None = ...,
        dtype: DataType | str | None = ...,
        box: BoxSpec | _Mapping | None = ...,
        discrete: DiscreteSpec | _Mapping | None = ...,
        multi_binary: MultiBinarySpec | _Mapping | None = ...,
        multi_discrete: MultiDiscreteSpec | _Mapping | None = ...,
        text: TextSpec | _Mapping | None = ...,
        dict: DictSpec | _Mapping | None = ...,
        tuple: TupleSpec | _Mapping | None = ...,
    ) -> None: ...

class SpaceValue(_message.Message):
    __slots__ = ("leaves",)
    LEAVES_FIELD_NUMBER: _ClassVar[int]
    leaves: _containers.RepeatedScalarFieldContainer[bytes]
    def __init__(self, leaves: _Iterable[bytes] | None = ...) -> None: ...

class MetaValue(_message.Message):
    __slots__ = ("int_value", "double_value", "string_value", "bool_value", "bytes_value", "list_value", "map_value")
    INT_VALUE_FIELD_NUMBER: _ClassVar[int]
    DOUBLE_VALUE_FIELD_NUMBER: _ClassVar[int]
    STRING_VALUE_FIELD_NUMBER: _ClassVar[int]
    BOOL_VALUE_FIELD_NUMBER: _ClassVar[int]
    BYTES_VALUE_FIELD_NUMBER: _ClassVar[int]
    LIST_VALUE_FIELD_NUMBER: _ClassVar[int]
    MAP_VALUE_FIELD_NUMBER: _ClassVar[int]
    int_value: int
    double_value: float
    string_value: str
    bool_value: bool
    bytes_value: bytes
    list_value: MetaList
    map_value: MetaMap
    def __init__(
        self,
        int_value: int | None = ...,
        double_value: float | None = ...,
        string_value: str | None = ...,
        bool_value: bool | None = ...,
        bytes_value: bytes | None = ...,
        list_value: MetaList | _Mapping | None = ...,
        map_value: MetaMap | _Mapping | None = ...,
    ) -> None: ...

class MetaList(_message.Message):
    __slots__ = ("items",)
    ITEMS_FIELD_NUMBER: _ClassVar[int]
    items: _containers.RepeatedCompositeFieldContainer[MetaValue]
    def __init__(self, items: _Iterable[MetaValue | _Mapping] | None = ...) -> None: ...

class MetaMap(_message.Message):
    __slots__ = ("entries",)
    class EntriesEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: MetaValue
        def __init__(self, key: str | None = ..., value: MetaValue | _Mapping | None = ...) -> None: ...

    ENTRIES_FIELD_NUMBER: _ClassVar[int]
    entries: _containers.MessageMap[str, MetaValue]
    def __init__(self, entries: _Mapping[str, MetaValue] | None = ...) -> None: ...
