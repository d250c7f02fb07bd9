# Build the Windows installer. A recipe on paper: never run here (packaging/windows/README.md).
# Usage (from the checkout, in PowerShell, Python 3.11 on PATH): powershell -File packaging\windows\build.ps1
$ErrorActionPreference = "Stop"
Set-Location (Join-Path $PSScriptRoot "..\..")

python -m pip install --upgrade pip
python -m pip install -e ".[dist]"
$version = (python -c "import app; print(app.__version__)").Trim()

New-Item -ItemType Directory -Force build | Out-Null
python packaging\deb\render_icons.py --ico build\stormbound.ico

python -m PyInstaller --noconfirm --log-level WARN --distpath dist --workpath build\pyinstaller packaging\stormbound.spec

# The frozen app must pass its own check before it is packed (no display needed).
$env:QT_QPA_PLATFORM = "offscreen"
& dist\stormbound\stormbound.exe --selftest
if ($LASTEXITCODE -ne 0) { throw "selftest failed" }

$iscc = Join-Path ${env:ProgramFiles(x86)} "Inno Setup 6\ISCC.exe"
& $iscc "/DAppVersion=$version" packaging\windows\stormbound.iss
if ($LASTEXITCODE -ne 0) { throw "ISCC failed" }
Get-ChildItem dist\*.exe
