#!/usr/bin/env bash
# Build Stormbound.app and put it in a .dmg. A recipe on paper: never run here (packaging/macos/README.md).
# Usage (from any folder, on macOS with Python 3.11 as python3): bash packaging/macos/build.sh
# Optional: SIGN_IDENTITY="Developer ID Application: ..." and NOTARY_PROFILE=<notarytool keychain profile>.
set -euo pipefail
cd "$(dirname "$0")/../.."

python3 -m pip install -e ".[dist]"
VERSION="$(python3 -c 'import app; print(app.__version__)')"
ARCH="$(uname -m)"
DMG="dist/Stormbound-${VERSION}-macos-${ARCH}.dmg"

mkdir -p build
rm -rf build/stormbound.iconset
python3 packaging/deb/render_icons.py --iconset build/stormbound.iconset
iconutil -c icns build/stormbound.iconset -o build/stormbound.icns

python3 -m PyInstaller --noconfirm --log-level WARN --distpath dist --workpath build/pyinstaller \
  packaging/stormbound.spec

# The frozen app must pass its own check before it is packed (no display needed).
QT_QPA_PLATFORM=offscreen dist/Stormbound.app/Contents/MacOS/stormbound --selftest

if [ -n "${SIGN_IDENTITY:-}" ]; then
  codesign --deep --force --options runtime --timestamp --sign "$SIGN_IDENTITY" dist/Stormbound.app
fi

STAGE="$(mktemp -d)"
trap 'rm -rf "$STAGE"' EXIT
cp -R dist/Stormbound.app "$STAGE/"
ln -s /Applications "$STAGE/Applications"
rm -f "$DMG"
hdiutil create -volname "Stormbound ${VERSION}" -srcfolder "$STAGE" -format UDZO -ov "$DMG"

if [ -n "${SIGN_IDENTITY:-}" ] && [ -n "${NOTARY_PROFILE:-}" ]; then
  codesign --sign "$SIGN_IDENTITY" --timestamp "$DMG"
  xcrun notarytool submit "$DMG" --keychain-profile "$NOTARY_PROFILE" --wait
  xcrun stapler staple "$DMG"
fi
echo "dmg: $DMG"
