from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class PackageName(_message.Message):
    __slots__ = ("name",)
    NAME_FIELD_NUMBER: _ClassVar[int]
    name: str
    def __init__(self, name: _Optional[str] = ...) -> None: ...

class Deprecation(_message.Message):
    __slots__ = ("message",)
    MESSAGE_FIELD_NUMBER: _ClassVar[int]
    message: str
    def __init__(self, message: _Optional[str] = ...) -> None: ...

class Channel(_message.Message):
    __slots__ = ("name", "csvName", "deprecation")
    NAME_FIELD_NUMBER: _ClassVar[int]
    CSVNAME_FIELD_NUMBER: _ClassVar[int]
    DEPRECATION_FIELD_NUMBER: _ClassVar[int]
    name: str
    csvName: str
    deprecation: Deprecation
    def __init__(self, name: _Optional[str] = ..., csvName: _Optional[str] = ..., deprecation: _Optional[_Union[Deprecation, _Mapping]] = ...) -> None: ...

class Package(_message.Message):
    __slots__ = ("name", "channels", "defaultChannelName", "deprecation")
    NAME_FIELD_NUMBER: _ClassVar[int]
    CHANNELS_FIELD_NUMBER: _ClassVar[int]
    DEFAULTCHANNELNAME_FIELD_NUMBER: _ClassVar[int]
    DEPRECATION_FIELD_NUMBER: _ClassVar[int]
    name: str
    channels: _containers.RepeatedCompositeFieldContainer[Channel]
    defaultChannelName: str
    deprecation: Deprecation
    def __init__(self, name: _Optional[str] = ..., channels: _Optional[_Iterable[_Union[Channel, _Mapping]]] = ..., defaultChannelName: _Optional[str] = ..., deprecation: _Optional[_Union[Deprecation, _Mapping]] = ...) -> None: ...

class GroupVersionKind(_message.Message):
    __slots__ = ("group", "version", "kind", "plural")
    GROUP_FIELD_NUMBER: _ClassVar[int]
    VERSION_FIELD_NUMBER: _ClassVar[int]
    KIND_FIELD_NUMBER: _ClassVar[int]
    PLURAL_FIELD_NUMBER: _ClassVar[int]
    group: str
    version: str
    kind: str
    plural: str
    def __init__(self, group: _Optional[str] = ..., version: _Optional[str] = ..., kind: _Optional[str] = ..., plural: _Optional[str] = ...) -> None: ...

class Dependency(_message.Message):
    __slots__ = ("type", "value")
    TYPE_FIELD_NUMBER: _ClassVar[int]
    VALUE_FIELD_NUMBER: _ClassVar[int]
    type: str
    value: str
    def __init__(self, type: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...

class Property(_message.Message):
    __slots__ = ("type", "value")
    TYPE_FIELD_NUMBER: _ClassVar[int]
    VALUE_FIELD_NUMBER: _ClassVar[int]
    type: str
    value: str
    def __init__(self, type: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...

class Bundle(_message.Message):
    __slots__ = ("csvName", "packageName", "channelName", "csvJson", "object", "bundlePath", "providedApis", "requiredApis", "version", "skipRange", "dependencies", "properties", "replaces", "skips", "deprecation")
    CSVNAME_FIELD_NUMBER: _ClassVar[int]
    PACKAGENAME_FIELD_NUMBER: _ClassVar[int]
    CHANNELNAME_FIELD_NUMBER: _ClassVar[int]
    CSVJSON_FIELD_NUMBER: _ClassVar[int]
    OBJECT_FIELD_NUMBER: _ClassVar[int]
    BUNDLEPATH_FIELD_NUMBER: _ClassVar[int]
    PROVIDEDAPIS_FIELD_NUMBER: _ClassVar[int]
    REQUIREDAPIS_FIELD_NUMBER: _ClassVar[int]
    VERSION_FIELD_NUMBER: _ClassVar[int]
    SKIPRANGE_FIELD_NUMBER: _ClassVar[int]
    DEPENDENCIES_FIELD_NUMBER: _ClassVar[int]
    PROPERTIES_FIELD_NUMBER: _ClassVar[int]
    REPLACES_FIELD_NUMBER: _ClassVar[int]
    SKIPS_FIELD_NUMBER: _ClassVar[int]
    DEPRECATION_FIELD_NUMBER: _ClassVar[int]
    csvName: str
    packageName: str
    channelName: str
    csvJson: str
    object: _containers.RepeatedScalarFieldContainer[str]
    bundlePath: str
    providedApis: _containers.RepeatedCompositeFieldContainer[GroupVersionKind]
    requiredApis: _containers.RepeatedCompositeFieldContainer[GroupVersionKind]
    version: str
    skipRange: str
    dependencies: _containers.RepeatedCompositeFieldContainer[Dependency]
    properties: _containers.RepeatedCompositeFieldContainer[Property]
    replaces: str
    skips: _containers.RepeatedScalarFieldContainer[str]
    deprecation: Deprecation
    def __init__(self, csvName: _Optional[str] = ..., packageName: _Optional[str] = ..., channelName: _Optional[str] = ..., csvJson: _Optional[str] = ..., object: _Optional[_Iterable[str]] = ..., bundlePath: _Optional[str] = ..., providedApis: _Optional[_Iterable[_Union[GroupVersionKind, _Mapping]]] = ..., requiredApis: _Optional[_Iterable[_Union[GroupVersionKind, _Mapping]]] = ..., version: _Optional[str] = ..., skipRange: _Optional[str] = ..., dependencies: _Optional[_Iterable[_Union[Dependency, _Mapping]]] = ..., properties: _Optional[_Iterable[_Union[Property, _Mapping]]] = ..., replaces: _Optional[str] = ..., skips: _Optional[_Iterable[str]] = ..., deprecation: _Optional[_Union[Deprecation, _Mapping]] = ...) -> None: ...

class ChannelEntry(_message.Message):
    __slots__ = ("packageName", "channelName", "bundleName", "replaces")
    PACKAGENAME_FIELD_NUMBER: _ClassVar[int]
    CHANNELNAME_FIELD_NUMBER: _ClassVar[int]
    BUNDLENAME_FIELD_NUMBER: _ClassVar[int]
    REPLACES_FIELD_NUMBER: _ClassVar[int]
    packageName: str
    channelName: str
    bundleName: str
    replaces: str
    def __init__(self, packageName: _Optional[str] = ..., channelName: _Optional[str] = ..., bundleName: _Optional[str] = ..., replaces: _Optional[str] = ...) -> None: ...

class ListPackageRequest(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class ListBundlesRequest(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class GetPackageRequest(_message.Message):
    __slots__ = ("name",)
    NAME_FIELD_NUMBER: _ClassVar[int]
    name: str
    def __init__(self, name: _Optional[str] = ...) -> None: ...

class GetBundleRequest(_message.Message):
    __slots__ = ("pkgName", "channelName", "csvName")
    PKGNAME_FIELD_NUMBER: _ClassVar[int]
    CHANNELNAME_FIELD_NUMBER: _ClassVar[int]
    CSVNAME_FIELD_NUMBER: _ClassVar[int]
    pkgName: str
    channelName: str
    csvName: str
    def __init__(self, pkgName: _Optional[str] = ..., channelName: _Optional[str] = ..., csvName: _Optional[str] = ...) -> None: ...

class GetBundleInChannelRequest(_message.Message):
    __slots__ = ("pkgName", "channelName")
    PKGNAME_FIELD_NUMBER: _ClassVar[int]
    CHANNELNAME_FIELD_NUMBER: _ClassVar[int]
    pkgName: str
    channelName: str
    def __init__(self, pkgName: _Optional[str] = ..., channelName: _Optional[str] = ...) -> None: ...

class GetAllReplacementsRequest(_message.Message):
    __slots__ = ("csvName",)
    CSVNAME_FIELD_NUMBER: _ClassVar[int]
    csvName: str
    def __init__(self, csvName: _Optional[str] = ...) -> None: ...

class GetReplacementRequest(_message.Message):
    __slots__ = ("csvName", "pkgName", "channelName")
    CSVNAME_FIELD_NUMBER: _ClassVar[int]
    PKGNAME_FIELD_NUMBER: _ClassVar[int]
    CHANNELNAME_FIELD_NUMBER: _ClassVar[int]
    csvName: str
    pkgName: str
    channelName: str
    def __init__(self, csvName: _Optional[str] = ..., pkgName: _Optional[str] = ..., channelName: _Optional[str] = ...) -> None: ...

class GetAllProvidersRequest(_message.Message):
    __slots__ = ("group", "version", "kind", "plural")
    GROUP_FIELD_NUMBER: _ClassVar[int]
    VERSION_FIELD_NUMBER: _ClassVar[int]
    KIND_FIELD_NUMBER: _ClassVar[int]
    PLURAL_FIELD_NUMBER: _ClassVar[int]
    group: str
    version: str
    kind: str
    plural: str
    def __init__(self, group: _Optional[str] = ..., version: _Optional[str] = ..., kind: _Optional[str] = ..., plural: _Optional[str] = ...) -> None: ...

class GetLatestProvidersRequest(_message.Message):
    __slots__ = ("group", "version", "kind", "plural")
    GROUP_FIELD_NUMBER: _ClassVar[int]
    VERSION_FIELD_NUMBER: _ClassVar[int]
    KIND_FIELD_NUMBER: _ClassVar[int]
    PLURAL_FIELD_NUMBER: _ClassVar[int]
    group: str
    version: str
    kind: str
    plural: str
    def __init__(self, group: _Optional[str] = ..., version: _Optional[str] = ..., kind: _Optional[str] = ..., plural: _Optional[str] = ...) -> None: ...

class GetDefaultProviderRequest(_message.Message):
    __slots__ = ("group", "version", "kind", "plural")
    GROUP_FIELD_NUMBER: _ClassVar[int]
    VERSION_FIELD_NUMBER: _ClassVar[int]
    KIND_FIELD_NUMBER: _ClassVar[int]
    PLURAL_FIELD_NUMBER: _ClassVar[int]
    group: str
    version: str
    kind: str
    plural: str
    def __init__(self, group: _Optional[str] = ..., version: _Optional[str] = ..., kind: _Optional[str] = ..., plural: _Optional[str] = ...) -> None: ...
