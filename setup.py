"""Packaging for tb-aggregate: the Aggregate tab for TensorBoard, its engine and its CLI."""

from setuptools import find_packages, setup

setup(
    name="tb-aggregate",
    version="0.1.0",
    description="Aggregate many TensorBoard runs into per-group curves with uncertainty bands",
    long_description=open("README.md", encoding="utf-8").read(),
    long_description_content_type="text/markdown",
    license="MIT",
    python_requires=">=3.10",
    # Every stage's folder (read/, compute/, write/): found, so a new one is never left out of a wheel.
    packages=find_packages(include=["tb_aggregate_plugin", "tb_aggregate_plugin.*"])
    + ["tb_aggregate_plugin.static"],
    # The tab's files live in frontend/ and are served as they are (no build step).
    package_dir={"tb_aggregate_plugin.static": "frontend"},
    package_data={"tb_aggregate_plugin.static": ["*.js", "*.css", "*.html"]},
    install_requires=[
        "tensorboard>=2.12",
        "werkzeug>=2.0",
        "numpy>=1.23",
        "pandas>=1.5",
        "plotly>=5.0",  # only its bundled plotly.min.js is used, served to the tab
        "scipy>=1.9",
        "regex>=2022.1",  # user regexes with a time limit (a pathological pattern can't hang a thread)
    ],
    extras_require={
        "xlsx": ["openpyxl>=3.0"],
        "parquet": ["pyarrow>=10"],
        "plot": ["matplotlib>=3.6"],  # figures for papers (tb_aggregate_plugin.write.figure)
        "test": [
            "pytest>=7",
            "pytest-timeout>=2",
            "ruff>=0.4",
            "tensorboardX>=2.6",
            "tensorboard-reducer>=0.3",
            "playwright>=1.40",
            "hypothesis>=6",
            "requests>=2.28",
            "openpyxl>=3.0",
            "pyarrow>=10",
            "statsmodels>=0.14",  # reference implementations for tests/test_statistics.py
            "rliable>=1.0",
            # Logdirs in object storage, tested against a local S3-compatible server: TensorBoard
            # reads s3:// through boto3 (not a dependency to run: only for s3:// logdirs).
            "boto3>=1.26",
            "moto[server]>=5",
            "matplotlib>=3.6",
            "trove-classifiers",
        ],
    },
    entry_points={
        "tensorboard_plugins": ["aggregate = tb_aggregate_plugin.plugin:AggregatePlugin"],
        "console_scripts": ["tb-aggregate = tb_aggregate_plugin.cli:entry_point"],
    },
    # Trove classifiers: only names on PyPI's list (tests/test_packaging.py checks each).
    classifiers=[
        "Environment :: Console",
        "Environment :: Plugins",
        "Environment :: Web Environment",
        "Intended Audience :: Science/Research",
        "Programming Language :: Python :: 3",
        "Programming Language :: Python :: 3 :: Only",
        "Topic :: Scientific/Engineering :: Artificial Intelligence",
        "Topic :: Scientific/Engineering :: Visualization",
    ],
)
