"""Every static ConfigProperty and constant of the classes the issue 42 design cites, from an
Apache Hudi bundle, by reflection (a research tool, run on the reference PySpark of
`make apache-hudi`; not project code):

    .venv/apache-hudi/bin/python docs/design/incremental-samples/config_dump.py \
        .venv/apache-hudi-jars/hudi-spark3.5-bundle_2.12-1.2.0.jar > OUT
"""

from __future__ import annotations

import sys

from pyspark.sql import SparkSession

CLASSES = [
    "org.apache.hudi.common.table.HoodieTableConfig",
    "org.apache.hudi.config.HoodieClusteringConfig",
    "org.apache.hudi.config.HoodieCompactionConfig",
    "org.apache.hudi.config.HoodieWriteConfig",
    "org.apache.hudi.config.HoodiePayloadConfig",
    "org.apache.hudi.common.config.HoodieCommonConfig",
    "org.apache.hudi.common.config.HoodieReaderConfig",
    "org.apache.hudi.keygen.constant.KeyGeneratorOptions",
    "org.apache.hudi.common.config.TimestampKeyGeneratorConfig",
    "org.apache.hudi.keygen.TimestampBasedAvroKeyGenerator$Config",
    "org.apache.hudi.common.model.HoodieRecordMerger",
    "org.apache.hudi.common.table.cdc.HoodieCDCUtils",
    "org.apache.hudi.common.model.HoodieRecord",
    "org.apache.hudi.keygen.KeyGenUtils",
    "org.apache.hudi.common.util.PartitionPathEncodeUtils",
]
SCALA_OBJECTS = [
    "org.apache.hudi.DataSourceReadOptions$",
    "org.apache.hudi.DataSourceWriteOptions$",
]
ENUMS = [
    "org.apache.hudi.common.table.cdc.HoodieCDCSupplementalLoggingMode",
    "org.apache.hudi.common.table.cdc.HoodieCDCOperation",
    "org.apache.hudi.common.table.cdc.HoodieCDCInferenceCase",
    "org.apache.hudi.common.config.RecordMergeMode",
    "org.apache.hudi.keygen.constant.KeyGeneratorType",
    "org.apache.hudi.common.table.log.block.HoodieLogBlock$HeaderMetadataType",
    "org.apache.hudi.common.table.log.block.HoodieLogBlock$HoodieLogBlockType",
    "org.apache.hudi.common.model.WriteOperationType",
    "org.apache.hudi.keygen.TimestampBasedAvroKeyGenerator$TimestampType",
    "org.apache.hudi.config.HoodieClusteringConfig$LayoutOptimizationStrategy",
    "org.apache.hudi.config.HoodieClusteringConfig$SpatialCurveCompositionStrategyType",
    "org.apache.hudi.table.action.cluster.ClusteringPlanPartitionFilterMode",
    "org.apache.hudi.common.model.WriteConcurrencyMode",
    "org.apache.hudi.common.model.HoodieOperation",
]


def describe(value) -> str:
    try:
        cls = value.getClass().getName()
    except Exception:  # noqa: BLE001
        return repr(value)
    if cls == "org.apache.hudi.common.config.ConfigProperty":
        default = value.defaultValue() if value.hasDefaultValue() else "<none>"
        alts = list(value.getAlternatives())
        since = value.getSinceVersion()
        since = since.get() if since.isPresent() else ""
        deprecated = value.getDeprecatedVersion()
        deprecated = deprecated.get() if deprecated.isPresent() else ""
        return f"{value.key()} = {default!s} alts={alts} since={since} deprecated={deprecated}"
    return f"{value.toString()}"


def main() -> None:
    spark = (
        SparkSession.builder.master("local[1]")
        .config("spark.jars", sys.argv[1])
        .config("spark.ui.enabled", "false")
        .getOrCreate()
    )
    jvm = spark._jvm  # research tool only
    modifier = jvm.java.lang.reflect.Modifier
    loader = jvm.java.lang.Thread.currentThread().getContextClassLoader()

    def load(name):
        return jvm.java.lang.Class.forName(name, True, loader)

    for name in CLASSES:
        print(f"## {name}")
        try:
            cls = load(name)
        except Exception as exc:  # noqa: BLE001
            print(f"  (absent: {str(exc).splitlines()[0][:120]})")
            continue
        for field in cls.getFields():
            if not modifier.isStatic(field.getModifiers()):
                continue
            try:
                print(f"  {field.getName()}: {describe(field.get(None))}")
            except Exception as exc:  # noqa: BLE001
                print(f"  {field.getName()}: <{str(exc).splitlines()[0][:80]}>")
    for name in SCALA_OBJECTS:
        print(f"## {name}")
        try:
            cls = load(name)
        except Exception:  # noqa: BLE001
            print("  (absent)")
            continue
        module = cls.getField("MODULE$").get(None)
        for method in cls.getMethods():
            if method.getParameterCount() == 0 and method.getReturnType().getName().endswith(
                "ConfigProperty"
            ):
                try:
                    print(f"  {method.getName()}: {describe(method.invoke(module, None))}")
                except Exception as exc:  # noqa: BLE001
                    print(f"  {method.getName()}: <{str(exc).splitlines()[0][:80]}>")
    for name in ENUMS:
        print(f"## enum {name}")
        try:
            cls = load(name)
        except Exception:  # noqa: BLE001
            print("  (absent)")
            continue
        for constant in cls.getEnumConstants() or []:
            extra = ""
            for getter in ("getClassName", "value", "getValue", "getBytes"):
                try:
                    extra += f" {getter}={constant.getClass().getMethod(getter, None).invoke(constant, None)}"
                except Exception:  # noqa: BLE001
                    pass
            print(f"  {constant.name()} ordinal={constant.ordinal()}{extra}")
    spark.stop()


if __name__ == "__main__":
    main()
