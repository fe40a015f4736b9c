"""JSON objects and YAML mappings that name a key twice are refused, the key named (never "last one wins")."""
from __future__ import annotations

from collections.abc import Hashable
from typing import Any

import yaml
from yaml.constructor import ConstructorError, SafeConstructor

MERGE_TAG = "tag:yaml.org,2002:merge"


class DuplicateKey(ValueError):
    """A JSON object holds the same key twice."""

    def __init__(self, key: str) -> None:
        super().__init__(f"the key {key!r} appears twice in one object (keep one)")
        self.key = key


def unique_object(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """`object_pairs_hook` for json.loads: the object, or DuplicateKey naming the repeated key."""
    result: dict[str, Any] = {}
    for key, value in pairs:
        if key in result:
            raise DuplicateKey(key)
        result[key] = value
    return result


class UniqueKeysMixin(SafeConstructor):
    """For a YAML loader: a mapping that states a key twice is a ConstructorError at the second one.

    Keys a merge (`<<: *base`) brings in may be overridden; that is what merging is for.
    """

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Hashable, Any]:
        if isinstance(node, yaml.MappingNode):
            seen: set[Any] = set()
            for key_node, _ in node.value:
                if key_node.tag == MERGE_TAG or not isinstance(key_node, yaml.ScalarNode):
                    continue
                key = self.construct_object(key_node, deep=deep)
                try:
                    repeated = key in seen
                except TypeError:  # unhashable: the constructor itself refuses it below
                    continue
                if repeated:
                    raise ConstructorError(None, None, f"the key {key!r} appears twice in one mapping (keep one)",
                                           key_node.start_mark)
                seen.add(key)
        return super().construct_mapping(node, deep)
