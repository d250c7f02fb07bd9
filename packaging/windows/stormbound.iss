; Inno Setup script of the Windows installer. A recipe on paper: never compiled here
; (packaging/windows/README.md). Compiled by build.ps1: ISCC.exe /DAppVersion=X stormbound.iss

#ifndef AppVersion
  #define AppVersion "0.0.0"
#endif

[Setup]
AppId={{6C1F2B7E-3D7A-4E55-9B5E-5A0C7D2E9F41}
AppName=Stormbound
AppVersion={#AppVersion}
AppPublisher=Stormbound maintainers
DefaultDirName={autopf}\Stormbound
DefaultGroupName=Stormbound
OutputDir=..\..\dist
OutputBaseFilename=stormbound-{#AppVersion}-windows-x64-setup
SetupIconFile=..\..\build\stormbound.ico
UninstallDisplayIcon={app}\stormbound.exe
ArchitecturesAllowed=x64compatible
ArchitecturesInstallIn64BitMode=x64compatible
Compression=lzma2
SolidCompression=yes
ChangesAssociations=yes
PrivilegesRequiredOverridesAllowed=dialog

[Tasks]
Name: "desktopicon"; Description: "{cm:CreateDesktopIcon}"; GroupDescription: "{cm:AdditionalIcons}"; Flags: unchecked

[Files]
; the whole PyInstaller folder (stormbound.exe and _internal\)
Source: "..\..\dist\stormbound\*"; DestDir: "{app}"; Flags: ignoreversion recursesubdirs createallsubdirs

[Icons]
Name: "{group}\Stormbound"; Filename: "{app}\stormbound.exe"; Parameters: "gui"
Name: "{group}\Uninstall Stormbound"; Filename: "{uninstallexe}"
Name: "{autodesktop}\Stormbound"; Filename: "{app}\stormbound.exe"; Parameters: "gui"; Tasks: desktopicon

[Registry]
; *.storm.json opens in Stormbound. Windows keys associations on the last extension, so the
; ProgID is attached to ".json" only as an "Open with" choice, never as its default:
; D-VerT's .json files keep their usual program.
Root: HKA; Subkey: "Software\Classes\Stormbound.Topology"; ValueType: string; ValueData: "Stormbound topology"; Flags: uninsdeletekey
Root: HKA; Subkey: "Software\Classes\Stormbound.Topology\DefaultIcon"; ValueType: string; ValueData: "{app}\stormbound.exe,0"
Root: HKA; Subkey: "Software\Classes\Stormbound.Topology\shell\open\command"; ValueType: string; ValueData: """{app}\stormbound.exe"" gui ""%1"""
Root: HKA; Subkey: "Software\Classes\.json\OpenWithProgids"; ValueType: string; ValueName: "Stormbound.Topology"; ValueData: ""; Flags: uninsdeletevalue
Root: HKA; Subkey: "Software\Classes\Applications\stormbound.exe\SupportedTypes"; ValueType: string; ValueName: ".json"; ValueData: ""; Flags: uninsdeletekey

[Run]
Filename: "{app}\stormbound.exe"; Parameters: "gui"; Description: "{cm:LaunchProgram,Stormbound}"; Flags: nowait postinstall skipifsilent
