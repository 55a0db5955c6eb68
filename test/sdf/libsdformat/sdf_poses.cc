// sdf_poses: loads an SDF file with libsdformat 12 and prints, as JSON, the pose of every model,
// link, joint and frame as libsdformat resolves it. bb_robot's tests compare their own SDF loader
// against this output; README.md (next to this file) documents the format.
//
// Usage: sdf_poses [-p DIR]... [--time N] FILE
//   -p DIR    a resource path: `model://NAME` URIs are looked up as DIR/NAME (repeatable). The
//             directories in GZ_SIM_RESOURCE_PATH, IGN_GAZEBO_RESOURCE_PATH and SDF_PATH follow.
//   --time N  load FILE N more times after a first, checked load and print timing JSON instead.
// Exit status: 0 success, 1 libsdformat reported errors (JSON {"errors": [...]} on stdout),
// 2 usage, 3 a pose, axis or body that libsdformat loaded could not be resolved.
//
// Build: g++ -O2 sdf_poses.cc -o sdf_poses $(pkg-config --cflags --libs sdformat12)

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include <sdf/Element.hh>
#include <sdf/Error.hh>
#include <sdf/Filesystem.hh>
#include <sdf/Frame.hh>
#include <sdf/Joint.hh>
#include <sdf/JointAxis.hh>
#include <sdf/Link.hh>
#include <sdf/Model.hh>
#include <sdf/ParserConfig.hh>
#include <sdf/Root.hh>
#include <sdf/SemanticPose.hh>
#include <sdf/World.hh>
#include <sdf/sdf_config.h>

namespace
{
using Pose = ignition::math::Pose3d;
using Vector = ignition::math::Vector3d;

// ---------------------------------------------------------------- JSON output

std::string Number(double _value)
{
  // Python's json module reads these three tokens; strict JSON has no way to say them.
  if (std::isnan(_value))
    return "NaN";
  if (std::isinf(_value))
    return _value > 0 ? "Infinity" : "-Infinity";
  char buffer[32];
  std::snprintf(buffer, sizeof(buffer), "%.17g", _value);
  return buffer;
}

std::string String(const std::string &_text)
{
  std::string out = "\"";
  for (unsigned char c : _text)
  {
    switch (c)
    {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      default:
        if (c < 0x20)
        {
          char buffer[8];
          std::snprintf(buffer, sizeof(buffer), "\\u%04x", c);
          out += buffer;
        }
        else
        {
          out += static_cast<char>(c);
        }
    }
  }
  return out + "\"";
}

std::string Bool(bool _value)
{
  return _value ? "true" : "false";
}

// [x, y, z, qw, qx, qy, qz]. Resolved poses are printed with their quaternion normalised: a pose
// written as a quaternion (//pose/@rotation_format="quat_xyzw") keeps the file's rounding, e.g.
// 0.7071068, and libsdformat composes it as it is (rotating vectors by q v q^-1, which is the
// rotation of q/|q|). Raw poses are printed as written.
std::string PoseJson(const Pose &_pose, bool _normalise = true)
{
  const auto &p = _pose.Pos();
  const auto q = _normalise ? _pose.Rot().Normalized() : _pose.Rot();
  return "[" + Number(p.X()) + ", " + Number(p.Y()) + ", " + Number(p.Z()) + ", " +
         Number(q.W()) + ", " + Number(q.X()) + ", " + Number(q.Y()) + ", " + Number(q.Z()) + "]";
}

std::string VectorJson(const Vector &_v)
{
  return "[" + Number(_v.X()) + ", " + Number(_v.Y()) + ", " + Number(_v.Z()) + "]";
}

// Writes `"key": value` pairs into an object, with commas and indentation.
class Object
{
  public: explicit Object(int _indent) : indent(_indent) {}

  public: Object &Add(const std::string &_key, const std::string &_json)
  {
    this->body += (this->body.empty() ? "" : ",") + std::string("\n") +
                  std::string(this->indent + 2, ' ') + String(_key) + ": " + _json;
    return *this;
  }

  public: std::string Str() const
  {
    if (this->body.empty())
      return "{}";
    return "{" + this->body + "\n" + std::string(this->indent, ' ') + "}";
  }

  private: int indent;
  private: std::string body;
};

std::string Array(const std::vector<std::string> &_items, int _indent)
{
  if (_items.empty())
    return "[]";
  std::string out = "[";
  for (size_t i = 0; i < _items.size(); ++i)
  {
    out += (i ? "," : "") + std::string("\n") + std::string(_indent + 2, ' ') + _items[i];
  }
  return out + "\n" + std::string(_indent, ' ') + "]";
}

std::string ErrorsJson(const sdf::Errors &_errors, int _indent)
{
  std::vector<std::string> items;
  for (const auto &error : _errors)
  {
    Object object(_indent + 2);
    object.Add("code", std::to_string(static_cast<int>(error.Code())));
    object.Add("message", String(error.Message()));
    object.Add("file", error.FilePath() ? String(*error.FilePath()) : "null");
    object.Add("line", error.LineNumber() ? std::to_string(*error.LineNumber()) : "null");
    object.Add("xml_path", error.XmlPath() ? String(*error.XmlPath()) : "null");
    items.push_back(object.Str());
  }
  return Array(items, _indent);
}

// ---------------------------------------------------------------- resolution

// Errors of SemanticPose::Resolve, ResolveXyz, ... after a load libsdformat accepted.
sdf::Errors resolveErrors;

void Check(const sdf::Errors &_errors, const std::string &_what)
{
  for (const auto &error : _errors)
  {
    resolveErrors.emplace_back(error.Code(), _what + ": " + error.Message());
  }
}

Pose Resolve(const sdf::SemanticPose &_semantic, const std::string &_to, const std::string &_what)
{
  Pose pose;
  Check(_semantic.Resolve(pose, _to), _what);
  return pose;
}

std::string JointTypeName(sdf::JointType _type)
{
  switch (_type)
  {
    case sdf::JointType::BALL: return "ball";
    case sdf::JointType::CONTINUOUS: return "continuous";
    case sdf::JointType::FIXED: return "fixed";
    case sdf::JointType::GEARBOX: return "gearbox";
    case sdf::JointType::PRISMATIC: return "prismatic";
    case sdf::JointType::REVOLUTE: return "revolute";
    case sdf::JointType::REVOLUTE2: return "revolute2";
    case sdf::JointType::SCREW: return "screw";
    case sdf::JointType::UNIVERSAL: return "universal";
    default: return "invalid";
  }
}

std::string FrameJson(const sdf::Frame &_frame, const std::string &_scopeFrame,
                      const Pose &_scopeWorld, const std::string &_where, int _indent)
{
  const std::string what = _where + " frame " + _frame.Name();
  const Pose pose = Resolve(_frame.SemanticPose(), _scopeFrame, what);
  std::string body;
  Check(_frame.ResolveAttachedToBody(body), what + " attached_to");
  Object object(_indent);
  object.Add("name", String(_frame.Name()));
  object.Add("pose", PoseJson(pose));
  object.Add("world_pose", PoseJson(_scopeWorld * pose));
  object.Add("attached_to", String(_frame.AttachedTo()));
  object.Add("attached_to_body", String(body));
  object.Add("raw_pose", PoseJson(_frame.RawPose(), false));
  object.Add("relative_to", String(_frame.PoseRelativeTo()));
  return object.Str();
}

std::string AxisJson(const sdf::JointAxis &_axis, const std::string &_element, const std::string &_what,
                     int _indent)
{
  Vector inJoint;
  Vector inModel;
  Check(_axis.ResolveXyz(inJoint), _what + " xyz");
  Check(_axis.ResolveXyz(inModel, "__model__"), _what + " xyz in __model__");
  Object object(_indent);
  object.Add("element", String(_element));
  object.Add("xyz", VectorJson(inJoint));
  object.Add("xyz_model", VectorJson(inModel));
  object.Add("raw_xyz", VectorJson(_axis.Xyz()));
  object.Add("expressed_in", String(_axis.XyzExpressedIn()));
  object.Add("lower", Number(_axis.Lower()));
  object.Add("upper", Number(_axis.Upper()));
  object.Add("effort", Number(_axis.Effort()));
  object.Add("velocity", Number(_axis.MaxVelocity()));
  return object.Str();
}

std::string JointJson(const sdf::Joint &_joint, const Pose &_modelWorld, const std::string &_where,
                      int _indent)
{
  const std::string what = _where + " joint " + _joint.Name();
  const Pose pose = Resolve(_joint.SemanticPose(), "__model__", what);
  const Pose inChild = Resolve(_joint.SemanticPose(), _joint.ChildLinkName(), what);
  std::string parentLink;
  std::string childLink;
  Check(_joint.ResolveParentLink(parentLink), what + " parent");
  Check(_joint.ResolveChildLink(childLink), what + " child");
  std::vector<std::string> axes;
  for (unsigned int i = 0; i < 2; ++i)
  {
    const sdf::JointAxis *axis = _joint.Axis(i);
    if (axis)
    {
      const std::string element = i ? "axis2" : "axis";
      axes.push_back(AxisJson(*axis, element, what + " " + element, _indent + 4));
    }
  }
  Object object(_indent);
  object.Add("name", String(_joint.Name()));
  object.Add("type", String(JointTypeName(_joint.Type())));
  object.Add("pose", PoseJson(pose));
  object.Add("world_pose", PoseJson(_modelWorld * pose));
  object.Add("pose_in_child", PoseJson(inChild));
  object.Add("parent", String(_joint.ParentLinkName()));
  object.Add("child", String(_joint.ChildLinkName()));
  object.Add("parent_link", String(parentLink));
  object.Add("child_link", String(childLink));
  object.Add("axes", Array(axes, _indent + 2));
  object.Add("raw_pose", PoseJson(_joint.RawPose(), false));
  object.Add("relative_to", String(_joint.PoseRelativeTo()));
  return object.Str();
}

// _parentWorld: the parent's pose in the world (world files) or the identity (the top-level model
// of a model file).
std::string ModelJson(const sdf::Model &_model, const std::string &_parentScope,
                      const Pose &_parentWorld, int _indent)
{
  const std::string scope =
      _parentScope.empty() ? _model.Name() : _parentScope + "::" + _model.Name();
  const std::string where = "model " + scope;
  // Default resolve-to frame: the world, or the parent model's frame for nested models.
  const Pose pose = Resolve(_model.SemanticPose(), "", where);
  const Pose world = _parentWorld * pose;

  std::vector<std::string> links;
  for (uint64_t i = 0; i < _model.LinkCount(); ++i)
  {
    const sdf::Link *link = _model.LinkByIndex(i);
    const Pose linkPose = Resolve(link->SemanticPose(), "__model__", where + " link " + link->Name());
    Object object(_indent + 4);
    object.Add("name", String(link->Name()));
    object.Add("pose", PoseJson(linkPose));
    object.Add("world_pose", PoseJson(world * linkPose));
    object.Add("raw_pose", PoseJson(link->RawPose(), false));
    object.Add("relative_to", String(link->PoseRelativeTo()));
    links.push_back(object.Str());
  }
  std::vector<std::string> joints;
  for (uint64_t i = 0; i < _model.JointCount(); ++i)
    joints.push_back(JointJson(*_model.JointByIndex(i), world, where, _indent + 4));
  std::vector<std::string> frames;
  for (uint64_t i = 0; i < _model.FrameCount(); ++i)
    frames.push_back(FrameJson(*_model.FrameByIndex(i), "__model__", world, where, _indent + 4));
  std::vector<std::string> models;
  for (uint64_t i = 0; i < _model.ModelCount(); ++i)
    models.push_back(ModelJson(*_model.ModelByIndex(i), scope, world, _indent + 4));

  Object object(_indent);
  object.Add("name", String(_model.Name()));
  object.Add("scope", String(scope));
  object.Add("pose", PoseJson(pose));
  object.Add("world_pose", PoseJson(world));
  object.Add("static", Bool(_model.Static()));
  object.Add("canonical_link", String(_model.CanonicalLinkAndRelativeName().second));
  object.Add("placement_frame", String(_model.PlacementFrameName()));
  object.Add("raw_pose", PoseJson(_model.RawPose(), false));
  object.Add("relative_to", String(_model.PoseRelativeTo()));
  object.Add("links", Array(links, _indent + 2));
  object.Add("joints", Array(joints, _indent + 2));
  object.Add("frames", Array(frames, _indent + 2));
  object.Add("models", Array(models, _indent + 2));
  return object.Str();
}

std::string WorldJson(const sdf::World &_world, int _indent)
{
  const Pose identity;
  std::vector<std::string> frames;
  for (uint64_t i = 0; i < _world.FrameCount(); ++i)
  {
    frames.push_back(FrameJson(*_world.FrameByIndex(i), "world", identity,
                               "world " + _world.Name(), _indent + 4));
  }
  std::vector<std::string> models;
  for (uint64_t i = 0; i < _world.ModelCount(); ++i)
    models.push_back(ModelJson(*_world.ModelByIndex(i), "", identity, _indent + 4));
  Object object(_indent);
  object.Add("name", String(_world.Name()));
  object.Add("frames", Array(frames, _indent + 2));
  object.Add("models", Array(models, _indent + 2));
  return object.Str();
}

// ---------------------------------------------------------------- main

std::vector<std::string> Split(const char *_text)
{
  std::vector<std::string> parts;
  if (!_text)
    return parts;
  std::stringstream stream(_text);
  std::string part;
  while (std::getline(stream, part, ':'))
  {
    if (!part.empty())
      parts.push_back(part);
  }
  return parts;
}

int Usage()
{
  std::cerr << "usage: sdf_poses [-p DIR]... [--time N] FILE\n";
  return 2;
}
}  // namespace

int main(int _argc, char **_argv)
{
  std::vector<std::string> resourcePaths;
  std::string file;
  long timeRuns = 0;
  for (int i = 1; i < _argc; ++i)
  {
    const std::string arg = _argv[i];
    if (arg == "-p" && i + 1 < _argc)
    {
      resourcePaths.push_back(_argv[++i]);
    }
    else if (arg == "--time" && i + 1 < _argc)
    {
      timeRuns = std::strtol(_argv[++i], nullptr, 10);
      if (timeRuns < 1)
        return Usage();
    }
    else if (!arg.empty() && arg[0] != '-' && file.empty())
    {
      file = arg;
    }
    else
    {
      return Usage();
    }
  }
  if (file.empty())
    return Usage();
  for (const char *variable : {"GZ_SIM_RESOURCE_PATH", "IGN_GAZEBO_RESOURCE_PATH", "SDF_PATH"})
  {
    for (const auto &path : Split(std::getenv(variable)))
      resourcePaths.push_back(path);
  }

  // model://NAME is DIR/NAME for the first resource path DIR where that exists (libsdformat tries
  // them in order). Anything libsdformat cannot find itself -- a relative URI such as `ur3e.sdf`
  // -- comes to the callback, which looks in the loaded file's directory, then the resource paths.
  // (libsdformat 12 knows no including file's directory; it would otherwise try the current
  // directory, which the tests set to an empty one.)
  // The global configuration, not a fresh one: libsdformat 12 parses includes nested in included
  // files with ParserConfig::GlobalConfig() (an include of an include is not found otherwise).
  sdf::ParserConfig &config = sdf::ParserConfig::GlobalConfig();
  for (const auto &path : resourcePaths)
    config.AddURIPath("model://", path);
  const std::string fileDir =
      file.find('/') == std::string::npos ? "." : file.substr(0, file.rfind('/'));
  config.SetFindCallback([fileDir, resourcePaths](const std::string &_uri) -> std::string {
    std::string name = _uri;
    const size_t scheme = name.find("://");
    if (scheme != std::string::npos)
      name = name.substr(scheme + 3);
    if (name.empty())
      return "";
    if (name[0] == '/')
      return sdf::filesystem::exists(name) ? name : "";
    std::vector<std::string> dirs = {fileDir};
    dirs.insert(dirs.end(), resourcePaths.begin(), resourcePaths.end());
    for (const auto &dir : dirs)
    {
      const std::string candidate = sdf::filesystem::append(dir, name);
      if (sdf::filesystem::exists(candidate))
        return candidate;
    }
    return "";
  });

  sdf::Root root;
  sdf::Errors errors = root.Load(file, config);
  if (!errors.empty())
  {
    std::cout << "{\n  \"file\": " << String(file) << ",\n  \"errors\": " << ErrorsJson(errors, 2)
              << "\n}\n";
    return 1;
  }

  if (timeRuns > 0)
  {
    std::vector<double> seconds;
    for (long i = 0; i < timeRuns; ++i)
    {
      sdf::Root again;
      const auto start = std::chrono::steady_clock::now();
      errors = again.Load(file, config);
      const auto stop = std::chrono::steady_clock::now();
      seconds.push_back(std::chrono::duration<double>(stop - start).count());
      if (!errors.empty())
      {
        std::cerr << "load " << i + 2 << " failed where the first succeeded\n";
        return 1;
      }
    }
    double total = 0;
    double low = seconds[0];
    double high = seconds[0];
    for (double s : seconds)
    {
      total += s;
      low = std::min(low, s);
      high = std::max(high, s);
    }
    Object object(0);
    object.Add("file", String(file));
    object.Add("runs", std::to_string(timeRuns));
    object.Add("mean_seconds", Number(total / timeRuns));
    object.Add("min_seconds", Number(low));
    object.Add("max_seconds", Number(high));
    std::cout << object.Str() << "\n";
    return 0;
  }

  std::vector<std::string> worlds;
  for (uint64_t i = 0; i < root.WorldCount(); ++i)
    worlds.push_back(WorldJson(*root.WorldByIndex(i), 4));
  const Pose identity;
  Object out(0);
  out.Add("libsdformat", String(SDF_VERSION_FULL));
  out.Add("spec_version", String(SDF_PROTOCOL_VERSION));
  out.Add("file", String(file));
  out.Add("original_version",
          String(root.Element() ? root.Element()->OriginalVersion() : std::string()));
  out.Add("worlds", Array(worlds, 2));
  out.Add("model", root.Model() ? ModelJson(*root.Model(), "", identity, 2) : "null");
  if (!resolveErrors.empty())
  {
    std::cout << "{\n  \"file\": " << String(file) << ",\n  \"resolve_errors\": "
              << ErrorsJson(resolveErrors, 2) << "\n}\n";
    return 3;
  }
  std::cout << out.Str() << "\n";
  return 0;
}
