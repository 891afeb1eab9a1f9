"""Swift mappers (Guide section 3): how variables map to files.  See docs/mappers.md.

``create_mapper(name, params, MapperContext(...))`` builds one by its CamelCase name or
snake_case alias; ``mapper.map(path)``, ``mapper.existing()``, ``mapper.fixed``,
``await mapper.prepare()`` when ``mapper.needs_prepare``.
"""

from swiftnb.engine.mappers.base import (  # noqa: F401
    MAPPERS,
    Mapper,
    MapperContext,
    MapperError,
    create_mapper,
    mapper_names,
    reads_file,
    register_mapper,
)
from swiftnb.engine.mappers import ext, files, lists  # noqa: F401,E402  (registers)
from swiftnb.engine.mappers.files import (  # noqa: F401,E402
    ConcurrentMapper,
    FilesysMapper,
    SimpleMapper,
    SingleFileMapper,
)
from swiftnb.engine.mappers.lists import (  # noqa: F401,E402
    ArrayMapper,
    CSVMapper,
    FixedArrayMapper,
    RegexpMapper,
    StructuredRegexpMapper,
    TestMapper,
)
from swiftnb.engine.mappers.ext import ExtMapper  # noqa: F401,E402


def single_file(path: str, ctx: MapperContext) -> SingleFileMapper:
    """The mapper of the ``<"path">`` shorthand."""
    return SingleFileMapper({"file": path}, ctx, spelled="single_file_mapper")


def default_mapper(ctx: MapperContext) -> ConcurrentMapper:
    """The mapper of an unmapped file-valued variable (temporary names in the run dir)."""
    return ConcurrentMapper({}, ctx, spelled="concurrent_mapper")


__all__ = [
    "MAPPERS", "Mapper", "MapperContext", "MapperError", "create_mapper", "mapper_names",
    "reads_file", "register_mapper", "single_file", "default_mapper", "SingleFileMapper", "SimpleMapper",
    "ConcurrentMapper", "FilesysMapper", "FixedArrayMapper", "ArrayMapper", "RegexpMapper",
    "StructuredRegexpMapper", "CSVMapper", "ExtMapper", "TestMapper",
]
